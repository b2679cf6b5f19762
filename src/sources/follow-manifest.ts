// Follows a fleet's manifest, downloading only objects not held: published objects never change.
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Manifest } from '../schemas/manifest.js'
import type { Chain, ChainServer } from '../snapshot/store/snapshot-store.js'
import { closeBody, DownloadBudget, downloadObject } from './download-object.js'
import {
  cacheName, firstProblems, logCacheUnusable, refuseTooLarge, SourceFollower,
  type CachedCopy, type FollowOptions
} from './follow-source.js'
import { parseManifest } from './read-manifest.js'
import { type RemoteSource, type Validators } from './remote-source.js'
import { isAlive, writeThroughTemporary } from '../write-through-temporary.js'
import { ManifestError, SourceError } from '../errors.js'
import { makeDirectory } from '../make-directory.js'
import { OWNER_DIRECTORY, tightenOwnFiles } from '../owner-only.js'
import { IMAGE_FORMAT } from '../snapshot/images/image-fingerprint.js'
import { fileDigest } from '../snapshot/store/chain-on-disk.js'
import { VERSION } from '../version.js'

/** A manifest names a few thousand objects at most. */
const MANIFEST_MAX_BYTES = 4 * 1024 * 1024

/** One per manifest URL: replicas may share SNAPSHOT_CACHE_DIR. */
function manifestCacheDir (source: RemoteSource, cacheDir: string): string {
  return join(cacheDir, cacheName('manifest', source))
}

/** The store's `file`, shown in /-/status as what is served. */
export function cachedManifestPath (source: RemoteSource, cacheDir: string): string {
  return join(manifestCacheDir(source, cacheDir), 'manifest.json')
}

/** The snapshot's digest as downloaded finds its image. */
interface CachedManifest extends CachedCopy {
  digests?: Record<string, string>
}

/** One manifest's downloads: a budget, and what they put on disk, removed if the manifest is refused (ADR 040). */
interface Update {
  signal: AbortSignal
  budget: DownloadBudget
  objects: string[]
  /** The digest of an image received. */
  image: string | null
}

export class ManifestFollower extends SourceFollower {
  private readonly objects: string
  /** Their objects are kept, everything else goes. */
  private heldManifest: Manifest | null = null
  private before: Manifest | null = null
  private readonly digests = new Map<string, string>()

  constructor (source: RemoteSource, store: ChainServer, options: FollowOptions) {
    super(source, store, options)
    this.objects = join(manifestCacheDir(source, options.cacheDir), 'objects')
  }

  protected override async serveCachedCopy (): Promise<void> {
    try {
      await makeDirectory(this.objects, OWNER_DIRECTORY)
      await tightenOwnFiles([join(this.objects, '..')], this.options.log)
      await this.sweepObjectDownloads()
    } catch (error) {
      logCacheUnusable(this.options.log, this.source, error)
    }
    const cached = await this.readCachedManifest()
    // The first load serves the pinned version; the cached manifest is held for unpin.
    if (this.sink.pinned()) {
      if (cached !== null) this.hold(cached.manifest, cached.validators)
      try {
        await this.store.start()
      } catch (error) {
        this.options.log.error(
          { source: this.source.shown, problem: (error as Error).message },
          'the pinned version does not load; waiting for the source'
        )
      }
      this.schedule(0)
      return
    }
    if (cached !== null) {
      try {
        const outcome = await this.sink.serve((await this.filesOf(cached.manifest, null)))
        if (outcome !== 'loaded') throw new Error(this.store.status().lastFailure?.problems.join('; ') ?? outcome)
        this.hold(cached.manifest, cached.validators)
        this.options.log.info({
          source: this.source.shown,
          cached: this.store.file,
          snapshot: cached.manifest.snapshot,
          changes: cached.manifest.changes.length
        }, 'serving the cached manifest\'s snapshot and changes while the source is checked')
      } catch (error) {
        this.options.log.error(
          { source: this.source.shown, cached: this.store.file, problem: (error as Error).message },
          'the cached manifest does not load; waiting for the source'
        )
      }
    }
    this.schedule(0)
  }

  protected override async follow (): Promise<void> {
    const polled = await this.poll()
    if (polled === null) return
    const { fetched, signal } = polled
    const text = await readSmall(fetched.body, fetched.length)
    let manifest: Manifest
    try {
      manifest = parseManifest(text)
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error
      this.refused = fetched.validators
      throw new SourceError(`the manifest is refused: ${firstProblems(error.problems)}`)
    }
    // A new ETag, the same names: nothing to load.
    const changed = this.heldManifest === null || !sameChain(this.heldManifest, manifest) ||
      this.store.current() === null
    if (changed) {
      const update: Update = { signal, budget: new DownloadBudget(this.options.maxBytes), objects: [], image: null }
      try {
        const chain = await this.filesOf(manifest, update)
        // A pin set while the objects downloaded: asked for again at unpin.
        if (this.sink.holdBack({ object: this.source.shown, etag: fetched.validators.etag })) {
          this.noticed = fetched.validators
          return
        }
        const outcome = await this.sink.serve(chain)
        if (outcome !== 'loaded') {
          // Objects never change: refused until the manifest does.
          if (outcome === 'failed') this.refused = fetched.validators
          const problems = this.store.status().lastFailure?.problems ?? [outcome]
          throw new SourceError(
            `the manifest's snapshot and changes do not load, still serving the last good state (${firstProblems(problems)})`
          )
        }
      } catch (error) {
        await this.removeDownloads(update)
        throw error
      }
    }
    this.refused = null
    await this.keep(manifest, text, fetched.validators)
    if (this.heldManifest !== null && !sameChain(this.heldManifest, manifest)) this.before = this.heldManifest
    this.heldManifest = manifest
    Object.assign(
      this.state,
      { etag: fetched.validators.etag, lastModified: fetched.validators.lastModified },
      changed ? { lastChanged: new Date() } : {}
    )
    await this.prune()
    if (changed) {
      this.options.log.info(
        { source: this.source.shown, snapshot: manifest.snapshot, changes: manifest.changes.length },
        'serving the manifest\'s snapshot and changes'
      )
    }
  }

  override async resume (): Promise<void> {
    const cached = await this.readCachedManifest()
    let problem: string | null = null
    try {
      const outcome = cached === null
        ? 'loaded'
        : await this.sink.serve((await this.filesOf(cached.manifest, null)))
      if (outcome !== 'loaded') problem = this.store.status().lastFailure?.problems[0] ?? outcome
    } catch (error) {
      problem = (error as Error).message
    }
    if (problem !== null) {
      // Nothing held: asked for whole, as a 304 would leave the pinned state served.
      this.options.log.error(
        { source: this.source.shown, problem },
        'the cached manifest cannot be served again; checking the source'
      )
      this.heldManifest = null
      Object.assign(this.state, { etag: null, lastModified: null })
    }
    await this.checkAgain()
  }

  private hold (manifest: Manifest, validators: Validators): void {
    this.heldManifest = manifest
    Object.assign(this.state, { etag: validators.etag, lastModified: validators.lastModified })
  }

  /** `update` null: the cache only, as at startup. */
  private async filesOf (manifest: Manifest, update: Update | null): Promise<Chain> {
    const files: string[] = []
    const digested = manifest.image !== undefined && this.options.images != null
    for (const name of [manifest.snapshot, ...manifest.changes]) {
      const file = join(this.objects, name)
      if ((await stat(file).catch(() => null))?.isFile() !== true) {
        if (update === null) throw new Error(`${name} is not in the cache`)
        await this.download(name, file, update, digested && name === manifest.snapshot)
      }
      files.push(file)
    }
    const snapshot = files[0] as string
    const snapshotDigest = await this.imageOf(manifest, snapshot, update)
    const chain: Chain = { snapshot, changes: files.slice(1), changesMayCome: true }
    if (snapshotDigest !== undefined) chain.snapshotDigest = snapshotDigest
    return chain
  }

  /** Undefined unless the image is this release's format; one that does not download leaves a parse (ADR 033). */
  private async imageOf (
    manifest: Manifest, snapshot: string, update: Update | null
  ): Promise<string | undefined> {
    const { image } = manifest
    const shelf = this.options.images ?? null
    if (image === undefined || shelf === null || image.format !== IMAGE_FORMAT || image.by !== VERSION) return undefined
    let digest = this.digests.get(manifest.snapshot)
    if (digest === undefined) {
      digest = await fileDigest(snapshot)
      this.digests.set(manifest.snapshot, digest)
    }
    // Served already (a manifest that adds a change file): its image would not be read.
    const served = this.store.servedFiles()?.snapshot.digest === digest
    if (update === null || served || await shelf.has(digest)) return digest
    try {
      await shelf.receive(digest, async file => { await this.downloadTo(image.name, file, update) })
      update.image = digest
    } catch (error) {
      // Only a stop ends the check; a timeout, or an image past the budget, leaves the snapshot to parse.
      if (this.abort.signal.aborted) throw error
      this.options.log.warn(
        { source: this.source.shown, image: image.name, problem: (error as Error).message },
        'the manifest\'s version image is not used: the snapshot is parsed'
      )
    }
    return digest
  }

  private async download (name: string, file: string, update: Update, digest: boolean): Promise<void> {
    // Hidden and per process: never an object's name, and replicas may share the directory.
    const temporary = join(this.objects, `.${name}.download-${process.pid}`)
    try {
      const hash = await this.downloadTo(name, temporary, update, digest)
      await rename(temporary, file)
      update.objects.push(file)
      if (hash !== null) this.digests.set(name, hash)
    } finally {
      await rm(temporary, { force: true })
    }
  }

  private async downloadTo (name: string, file: string, update: Update, digest = false): Promise<string | null> {
    const { signal, budget } = update
    const object = this.source.sibling(name)
    let fetched
    try {
      fetched = await object.fetch(null, signal)
    } catch (error) {
      if (!(error instanceof SourceError)) throw error
      throw new SourceError(`the manifest names ${name}, which cannot be downloaded: ${error.message}`)
    }
    if (!fetched.changed) throw new SourceError(`${object.shown} answered 304 to a request without validators`)
    const limit = budget.next()
    await refuseTooLarge(fetched, limit, name)
    const downloaded = await downloadObject(fetched.body, file, { limit, length: fetched.length, signal, digest })
    budget.spend(downloaded.bytes)
    this.options.log.info(
      { source: this.source.shown, object: object.shown, bytes: downloaded.bytes },
      'downloaded an object the manifest names'
    )
    return downloaded.digest
  }

  /** What the next start serves first. */
  private async keep (manifest: Manifest, text: string, validators: Validators): Promise<void> {
    const copy: CachedManifest = { ...validators, url: this.source.shown, downloadedAt: new Date().toISOString() }
    const digest = this.digests.get(manifest.snapshot)
    if (digest !== undefined) copy.digests = { [manifest.snapshot]: digest }
    // Names of this process's own: replicas may share the directory.
    await writeThroughTemporary(this.store.file, async emit => { await emit(text) }, { ownerOnly: true })
    await writeThroughTemporary(this.metaFile, async emit => { await emit(JSON.stringify(copy)) }, { ownerOnly: true })
  }

  private async readCachedManifest (): Promise<{ manifest: Manifest, validators: Validators } | null> {
    let text: string
    try {
      text = await readFile(this.store.file, 'utf8')
    } catch {
      return null
    }
    let manifest: Manifest
    try {
      manifest = parseManifest(text)
    } catch (error) {
      this.options.log.error(
        { source: this.source.shown, cached: this.store.file, problem: (error as Error).message },
        'the cached manifest is not one; waiting for the source'
      )
      return null
    }
    try {
      const meta = JSON.parse(await readFile(this.metaFile, 'utf8')) as CachedManifest
      for (const [name, digest] of Object.entries(meta.digests ?? {})) {
        if (typeof digest === 'string') this.digests.set(name, digest)
      }
      return { manifest, validators: { etag: meta.etag, lastModified: meta.lastModified } }
    } catch {
      return { manifest, validators: { etag: null, lastModified: null } }
    }
  }

  /** But those of the state served (a chain served up to a bad change file) and those a kept manifest names. */
  private async removeDownloads (update: Update): Promise<void> {
    const served = this.store.servedFiles()
    const inUse = new Set([served?.snapshot.file, ...served?.changes.map(change => change.file) ?? []])
    const named = new Set([this.heldManifest, this.before]
      .flatMap(manifest => manifest === null ? [] : [manifest.snapshot, ...manifest.changes]))
    const removed: string[] = []
    for (const file of update.objects) {
      if (inUse.has(file) || named.has(basename(file))) continue
      await rm(file, { force: true })
      this.digests.delete(basename(file))
      removed.push(basename(file))
    }
    if (update.image !== null && update.image !== served?.snapshot.digest) {
      await this.options.images?.discard(update.image)
      removed.push(`the image of ${update.image}`)
    }
    if (removed.length > 0) {
      this.options.log.info({ source: this.source.shown, removed }, 'what the refused manifest downloaded is removed')
    }
  }

  /** Keeps the previous manifest's objects: a step back costs no download. */
  private async prune (): Promise<void> {
    const kept = new Set([this.heldManifest, this.before]
      .flatMap(manifest => manifest === null ? [] : [manifest.snapshot, ...manifest.changes]))
    for (const entry of await readdir(this.objects).catch(() => [])) {
      if (!entry.startsWith('.') && !kept.has(entry)) await rm(join(this.objects, entry), { force: true })
    }
  }

  private async sweepObjectDownloads (): Promise<void> {
    for (const entry of await readdir(this.objects)) {
      const pid = /^\..+\.download-(\d+)$/.exec(entry)?.[1]
      if (pid !== undefined && !isAlive(Number(pid))) await rm(join(this.objects, entry), { force: true })
    }
  }
}

function sameChain (a: Manifest, b: Manifest): boolean {
  return a.snapshot === b.snapshot && a.changes.length === b.changes.length &&
    a.changes.every((name, i) => name === b.changes[i])
}

async function readSmall (body: AsyncIterable<Uint8Array>, length: number | null): Promise<string> {
  if (length !== null && length > MANIFEST_MAX_BYTES) {
    await closeBody(body)
    throw new SourceError(`the manifest is ${length} bytes: a manifest is at most ${MANIFEST_MAX_BYTES}`)
  }
  const chunks: Buffer[] = []
  let bytes = 0
  try {
    for await (const chunk of body) {
      bytes += chunk.length
      if (bytes > MANIFEST_MAX_BYTES) {
        throw new SourceError(`the manifest is more than ${MANIFEST_MAX_BYTES} bytes: not one`)
      }
      chunks.push(Buffer.from(chunk))
    }
  } catch (error) {
    await closeBody(body)
    if (error instanceof SourceError) throw error
    throw new SourceError(`the manifest's download failed: ${(error as Error).message}`)
  }
  if (length !== null && bytes !== length) {
    throw new SourceError(`the manifest's download was cut short: ${bytes} of ${length} bytes`)
  }
  return Buffer.concat(chunks).toString('utf8')
}
