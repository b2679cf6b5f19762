// Follows a fleet's manifest, downloading only objects not held: published objects never change.
import { readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Manifest, ManifestImage } from '../schemas/manifest.js'
import type { Chain, ChainServer, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import { closeBody, DownloadBudget } from './download-object.js'
import {
  cacheName, describeLocalError, firstProblems, logCacheUnusable, SourceFollower, type CachedCopy, type FollowOptions
} from './follow-source.js'
import { ManifestObjects, type Update } from './manifest-objects.js'
import { parseManifest } from './read-manifest.js'
import { type RemoteSource, type Validators } from './remote-source.js'
import { writeThroughTemporary } from '../write-through-temporary.js'
import { ManifestError, SourceError } from '../errors.js'
import { makeDirectory } from '../make-directory.js'
import { OWNER_DIRECTORY, tightenOwnFiles } from '../owner-only.js'
import { IMAGE_FORMAT } from '../snapshot/images/image-fingerprint.js'
import { fileDigest } from '../snapshot/store/serve-chain.js'

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

/** A chain served from its snapshot's image before the snapshot downloaded: the snapshot follows (ADR 042). */
/** A snapshot downloading behind the check that served its image. */
interface Behind {
  name: string
  done: Promise<void>
  stop: AbortController
}

interface Pending {
  chain: Chain
  manifest: Manifest
  name: string
  /** What the manifest says the snapshot's digest is: the download must have it. */
  digest: string
  budget: DownloadBudget
}

export class ManifestFollower extends SourceFollower {
  private readonly objects: ManifestObjects
  /** Their objects are kept, everything else goes. */
  private heldManifest: Manifest | null = null
  private before: Manifest | null = null
  private pending: Pending | null = null
  /**
   * A snapshot not tried again for that manifest, its image serving: its download found the disk full, or it was not
   * the image's and did not load.
   */
  private givenUp: string | null = null
  /** An image that did not download or read: the snapshot instead, until another is published. */
  private unreadImage: string | null = null
  /** The pending snapshot's download, beside later checks: one that serves another snapshot stops it. */
  private fetching: Behind | null = null
  /** Every download behind not yet over, stopped ones included: a stop waits for them. */
  private readonly behind = new Set<Promise<void>>()
  /** The check that keeps a snapshot downloaded behind. */
  private keeping: Promise<void> | null = null

  constructor (source: RemoteSource, store: ChainServer, options: FollowOptions) {
    super(source, store, options)
    this.objects = new ManifestObjects(join(manifestCacheDir(source, options.cacheDir), 'objects'), source, options.log)
  }

  protected override async serveCachedCopy (): Promise<void> {
    try {
      await makeDirectory(this.objects.dir, OWNER_DIRECTORY)
      await tightenOwnFiles([join(this.objects.dir, '..')], this.options.log)
      await this.objects.sweep()
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
        const outcome = await this.serveChain(await this.filesOf(cached.manifest, null), cached.manifest, null)
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

  /** A snapshot downloaded behind is served by the check after its download: a check is the one that serves. */
  protected override async follow (): Promise<void> {
    try {
      await this.followManifest()
    } finally {
      await this.keepPendingIfHere()
      this.fetchSnapshotLater()
    }
  }

  override async stop (): Promise<void> {
    this.fetching?.stop.abort()
    await super.stop()
    await this.settled()
  }

  /** Resolves once no snapshot downloads behind, and the check that keeps one has run (tests wait for it). */
  async settled (): Promise<void> {
    for (;;) {
      const [behind] = this.behind
      if (behind !== undefined) await behind
      else if (this.keeping !== null) await this.keeping
      else return
    }
  }

  private async followManifest (): Promise<void> {
    const polled = await this.poll()
    if (polled === null) return
    const { fetched, signal } = polled
    const text = await readSmall(fetched.body, fetched.length)
    let manifest: Manifest
    try {
      manifest = parseManifest(text)
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error
      this.refuse('content', fetched.validators)
      throw new SourceError(`the manifest is refused: ${firstProblems(error.problems)}`)
    }
    // A new ETag, the same names: nothing to load.
    const changed = this.heldManifest === null || !sameChain(this.heldManifest, manifest) ||
      this.store.current() === null
    if (changed) {
      const update: Update = { signal, budget: new DownloadBudget(this.options.maxBytes), objects: [], image: null }
      try {
        const chain = await this.filesOf(manifest, update)
        const outcome = await this.serveChain(chain, manifest, update, () => {
          // A pin set while the objects downloaded: asked for again at unpin.
          if (!this.sink.holdBack({ object: this.source.shown, etag: fetched.validators.etag })) return false
          this.noticed = fetched.validators
          return true
        })
        if (outcome === 'held') return
        if (outcome !== 'loaded') {
          // Objects never change: refused until the manifest does.
          this.refuse(outcome, fetched.validators)
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
    this.refused.forget()
    await this.keep(manifest, text, fetched.validators)
    if (this.heldManifest !== null && !sameChain(this.heldManifest, manifest)) this.before = this.heldManifest
    this.heldManifest = manifest
    Object.assign(
      this.state,
      { etag: fetched.validators.etag, lastModified: fetched.validators.lastModified },
      changed ? { lastChanged: new Date() } : {}
    )
    await this.objects.keepOnly(this.keptNames())
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
        : await this.serveChain(await this.filesOf(cached.manifest, null), cached.manifest, null)
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

  /**
   * Served, and what it leaves to fetch. An image that does not read makes the snapshot downloaded and served instead
   * (with `update`; from the cache alone it is a failure). `held`: a pin came meanwhile.
   */
  private async serveChain (
    chain: Chain, manifest: Manifest, update: Update | null, held: () => boolean = () => false
  ): Promise<ReloadOutcome | 'held'> {
    let wanted = chain
    for (;;) {
      if (held()) {
        // Not served now: the version put together from its image is let go, its file kept.
        if (wanted.snapshotDigest !== undefined) this.options.images?.release(wanted.snapshotDigest)
        return 'held'
      }
      // Before it is served: a restart's prune never removes the only copy of the version (ADR 042).
      if (wanted.imageAlone === true) await this.options.images?.holdAlone(wanted.snapshotDigest ?? null)
      const outcome = await this.sink.serve(wanted)
      if (outcome === 'no image' && update !== null) {
        this.unreadImage = manifest.image?.digest ?? null
        wanted = await this.withSnapshot(manifest, wanted, update)
        continue
      }
      if (outcome !== 'loaded') {
        // What was served alone before, if anything, is still.
        if (wanted.imageAlone === true) await this.options.images?.holdAlone(this.pending?.digest ?? null)
        return outcome
      }
      // Another snapshot served: the one downloading behind is not needed, and the new one's may start at once.
      if (this.fetching !== null && this.fetching.name !== manifest.snapshot) {
        this.fetching.stop.abort()
        this.fetching = null
      }
      if (wanted.imageAlone === true) {
        this.pending = {
          chain: wanted,
          manifest,
          name: manifest.snapshot,
          digest: wanted.snapshotDigest as string,
          budget: update?.budget ?? new DownloadBudget(this.options.maxBytes)
        }
      } else {
        this.pending = null
        await this.options.images?.holdAlone(null)
      }
      return outcome
    }
  }

  /** `update` null: the cache only, as at startup. */
  private async filesOf (manifest: Manifest, update: Update | null): Promise<Chain> {
    const image = this.usableImage(manifest)
    const snapshot = this.objects.pathOf(manifest.snapshot)
    let alone = false
    if (!await this.objects.has(manifest.snapshot)) {
      // A join: the image first, served while the snapshot follows (ADR 042).
      const shelf = this.options.images
      if (image !== null && shelf != null &&
        (await shelf.has(image.snapshot) || (update !== null && await this.receive(image, update)))) {
        alone = true
      } else if (update === null) {
        throw new Error(`${manifest.snapshot} is not in the cache`)
      } else {
        await this.downloadSnapshot(manifest.snapshot, update, image !== null)
      }
    }
    const changes: string[] = []
    for (const name of manifest.changes) {
      if (!await this.objects.has(name)) {
        if (update === null) throw new Error(`${name} is not in the cache`)
        await this.objects.download(name, update, false)
      }
      changes.push(this.objects.pathOf(name))
    }
    const chain: Chain = { snapshot, changes, changesMayCome: true }
    // Checked against the snapshot when it downloads.
    if (alone) return { ...chain, snapshotDigest: (image as ManifestImage).snapshot, imageAlone: true }
    // Asked again: one that did not download is not asked for twice.
    const snapshotDigest = await this.imageOf(manifest, this.usableImage(manifest), snapshot, update)
    return snapshotDigest === undefined ? chain : { ...chain, snapshotDigest }
  }

  /** The manifest's image when this replica can read it: its format, made by code that renders as this one does. */
  private usableImage (manifest: Manifest): ManifestImage | null {
    const { image } = manifest
    const shelf = this.options.images ?? null
    if (image === undefined || shelf === null || image.format !== IMAGE_FORMAT ||
      image.fingerprint !== shelf.fingerprint || image.digest === this.unreadImage) return null
    return image
  }

  /** The snapshot's digest when an image may be read for it; one that does not download leaves a parse (ADR 033). */
  private async imageOf (
    manifest: Manifest, image: ManifestImage | null, snapshot: string, update: Update | null
  ): Promise<string | undefined> {
    if (image === null) return undefined
    let digest = this.objects.digests.get(manifest.snapshot)
    if (digest === undefined) {
      digest = await fileDigest(snapshot)
      this.objects.digests.set(manifest.snapshot, digest)
    }
    // Served already (a manifest that adds a change file): its image would not be read.
    const served = this.store.servedFiles()?.snapshot.digest === digest
    const shelf = this.options.images
    if (update === null || served || image.snapshot !== digest || shelf == null) return digest
    if (await shelf.has(digest)) return digest
    await this.receive(image, update)
    return digest
  }

  /** Kept on the shelf only when it is what the manifest says: its size, its SHA-256, its header's snapshot. */
  private async receive (image: ManifestImage, update: Update): Promise<boolean> {
    try {
      await this.options.images?.receive(image.snapshot, image.bytes, async (file, onPiece) => {
        const { digest } = await this.objects.fetchTo(image.name, file, update, { digest: 'sha256', bytes: image.bytes, onPiece })
        if (digest !== image.digest) {
          throw new SourceError(`its SHA-256 is ${digest ?? ''}, where the manifest says ${image.digest}`)
        }
      })
      update.image = image.snapshot
      return true
    } catch (error) {
      // Only a stop ends the check; a timeout, or an image past the budget, leaves the snapshot to parse.
      if (this.abort.signal.aborted) throw error
      this.unreadImage = image.digest
      this.options.log.warn(
        { source: this.source.shown, image: image.name, problem: (error as Error).message },
        'the manifest\'s version image is not used: the snapshot is parsed'
      )
      return false
    }
  }

  /** `chain` with its snapshot downloaded: its image did not read. */
  private async withSnapshot (manifest: Manifest, chain: Chain, update: Update): Promise<Chain> {
    const { imageAlone: _alone, snapshotDigest: _digest, ...rest } = chain
    await this.downloadSnapshot(manifest.snapshot, update, true)
    const digest = this.objects.digests.get(manifest.snapshot)
    return digest === undefined ? rest : { ...rest, snapshotDigest: digest }
  }

  /**
   * The snapshot of a version served from its image, downloaded behind: a kept version (rollback, pin) needs its
   * file. Checks go on meanwhile: a change published is served at once, another snapshot's image downloaded
   * and read (which stops this one). A failure leaves the image served and is tried again at the next check (not
   * after a full disk, until another manifest).
   */
  private fetchSnapshotLater (): void {
    const pending = this.pending
    if (pending === null || this.givenUp === pending.name || this.fetching !== null || this.abort.signal.aborted) return
    const stop = new AbortController()
    const done = this.download(pending, stop.signal).then(downloaded => {
      if (this.fetching === behind) this.fetching = null
      this.behind.delete(done)
      // A file already here (a pin held it back, or keeping it failed) waits for the next poll's check.
      if (!downloaded || this.abort.signal.aborted) return
      // The check under way ends first: it may have looked before the download ended.
      const keeping = this.checkAgain().finally(() => { if (this.keeping === keeping) this.keeping = null })
      this.keeping = keeping
    })
    const behind: Behind = { name: pending.name, done, stop }
    this.fetching = behind
    this.behind.add(done)
  }

  /** Never rejects: true when this call downloaded the snapshot. */
  private async download (pending: Pending, stop: AbortSignal): Promise<boolean> {
    try {
      if (await this.objects.has(pending.name)) return false
      const signal = AbortSignal.any([this.abort.signal, stop, AbortSignal.timeout(600_000)])
      const update: Update = { signal, budget: pending.budget, objects: [], image: null }
      await this.objects.download(pending.name, update, true, true)
      return true
    } catch (error) {
      if (this.abort.signal.aborted || stop.aborted) return false
      this.notKept(pending, error, 'the snapshot is not downloaded: its version is served from its image, and not kept (no rollback or pin to it) until it is')
      return false
    }
  }

  /** One download into a name's file at a time: the one behind is joined. */
  private async downloadSnapshot (name: string, update: Update, digest: boolean): Promise<void> {
    if (this.fetching?.name === name) await this.fetching.done
    if (!await this.objects.has(name)) await this.objects.download(name, update, digest)
  }

  /** The pending version kept with its snapshot, once that is here; never rejects. */
  private async keepPendingIfHere (): Promise<void> {
    const pending = this.pending
    // Pinned, a kept version is served: this one is served and kept at unpin (the cached manifest).
    if (pending === null || this.givenUp === pending.name || this.abort.signal.aborted || this.sink.pinned()) return
    try {
      if (!await this.objects.has(pending.name)) return
      let digest = this.objects.digests.get(pending.name)
      if (digest === undefined) {
        digest = await fileDigest(pending.chain.snapshot)
        this.objects.digests.set(pending.name, digest)
      }
      const { manifest } = pending
      await this.keepRecord(manifest)
      const { imageAlone: _alone, ...chain } = pending.chain
      const pinned = (): boolean => this.sink.pinned()
      if (digest === pending.digest) {
        // A pin set meanwhile (a rollback during the download) is not served over.
        const outcome = await this.serveChain(chain, manifest, null, pinned)
        if (outcome !== 'loaded') {
          this.options.log.warn(
            { source: this.source.shown, snapshot: pending.name, outcome },
            'the snapshot is downloaded but its version is not kept now: it is served from its image, and kept at a later check'
          )
          return
        }
        this.options.log.info(
          { source: this.source.shown, snapshot: pending.name },
          'the snapshot served from its image is downloaded: its version is kept'
        )
        return
      }
      // The snapshot is what the manifest publishes; the image only stood for it.
      this.unreadImage = manifest.image?.digest ?? null
      this.options.log.warn(
        { source: this.source.shown, snapshot: pending.name, digest, image: pending.digest },
        'the snapshot is not the one the manifest\'s image was made of: it is parsed, and the image removed'
      )
      const outcome = await this.serveChain({ ...chain, snapshotDigest: digest }, manifest, null, pinned)
      if (outcome === 'loaded') await this.options.images?.discard(pending.digest)
      else if (outcome !== 'held') this.givenUp = pending.name
    } catch (error) {
      if (this.abort.signal.aborted) return
      this.notKept(pending, error, 'the snapshot is downloaded but its version is not kept: it is served from its image, and tried again at the next check')
    }
  }

  /** Logged, and not tried again after a full disk until another manifest. */
  private notKept (pending: Pending, error: unknown, message: string): void {
    if ((error as NodeJS.ErrnoException).code === 'ENOSPC') this.givenUp = pending.name
    this.options.log.warn({
      source: this.source.shown,
      snapshot: pending.name,
      problem: error instanceof SourceError ? error.message : describeLocalError(error)
    }, message)
  }

  /** What the next start serves first. */
  private async keep (manifest: Manifest, text: string, validators: Validators): Promise<void> {
    // Names of this process's own: replicas may share the directory.
    await writeThroughTemporary(this.store.file, async emit => { await emit(text) }, { ownerOnly: true })
    await this.keepRecord(manifest, validators)
  }

  /** With the snapshot's digest, taken as it downloaded: a restart does not digest it again. */
  private async keepRecord (
    manifest: Manifest, validators: Validators = { etag: this.state.etag, lastModified: this.state.lastModified }
  ): Promise<void> {
    const copy: CachedManifest = { ...validators, url: this.source.shown, downloadedAt: new Date().toISOString() }
    const digest = this.objects.digests.get(manifest.snapshot)
    if (digest !== undefined) copy.digests = { [manifest.snapshot]: digest }
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
        if (typeof digest === 'string') this.objects.digests.set(name, digest)
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
    const named = this.keptNames()
    const removed = await this.objects.remove(update, file => inUse.has(file) || named.has(basename(file)))
    if (update.image !== null && update.image !== served?.snapshot.digest) {
      await this.options.images?.discard(update.image)
      removed.push(`the image of ${update.image}`)
    }
    if (removed.length > 0) {
      this.options.log.info({ source: this.source.shown, removed }, 'what the refused manifest downloaded is removed')
    }
  }

  /** The names the manifest held and the one before list: a step back costs no download. */
  private keptNames (): Set<string> {
    return new Set([this.heldManifest, this.before]
      .flatMap(manifest => manifest === null ? [] : [manifest.snapshot, ...manifest.changes]))
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
