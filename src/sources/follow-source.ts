// Follows a remote snapshot; a download replaces the cached copy only once loaded: it is always the last good one.
import { readFile, rename, rm, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { createHash } from 'node:crypto'
import type { ImageShelf } from '../snapshot/images/image-shelf.js'
import { RefusalMemory, type RefusalCause } from '../snapshot/store/refusal-memory.js'
import type { ChainServer, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { StoreLogger } from '../snapshot/store/store-logger.js'
import type { ChainSink, ChainSource, SourceStatusJson } from './chain-source.js'
import { type Fetched, type RemoteSource, type Validators } from './remote-source.js'
import { closeBody, downloadObject, objectLimit, type DownloadLimit } from './download-object.js'
import { sweepDeadDownloads, writeThroughTemporary } from '../write-through-temporary.js'
import { SourceError } from '../errors.js'
import { makeDirectory } from '../make-directory.js'
import { OWNER_DIRECTORY, tightenOwnFiles } from '../owner-only.js'

export interface FollowOptions {
  cacheDir: string
  pollSeconds: number
  maxBytes: number
  log: StoreLogger
  images?: ImageShelf | null
}

interface SourceStatus {
  url: string
  etag: string | null
  lastModified: string | null
  lastChecked: Date | null
  lastChanged: Date | null
  lastError: { at: Date, message: string } | null
  checks: number
  errors: number
}

export interface CachedCopy extends Validators {
  url: string
  downloadedAt: string
}

/** One name per source, so replicas may share a directory. */
export function cacheName (prefix: string, source: RemoteSource): string {
  return `${prefix}-${createHash('sha256').update(source.shown).digest('hex').slice(0, 12)}`
}

export function cachedCopyPath (source: RemoteSource, cacheDir: string): string {
  return join(cacheDir, cacheName('snapshot', source) + extensionOf(source))
}

/** openSource refuses a SNAPSHOT_URL without one. */
function extensionOf (source: RemoteSource): string {
  return source.extension ?? ''
}

export function firstProblems (problems: readonly string[]): string {
  return `${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`
}

export async function refuseTooLarge (fetched: { length: number | null, body: AsyncIterable<Uint8Array> },
  limit: DownloadLimit, what: string): Promise<void> {
  if (fetched.length === null || fetched.length <= limit.maxBytes) return
  await closeBody(fetched.body)
  throw new SourceError(
    `${what} is ${fetched.length} bytes, more than ${limit.rule} allows (${limit.detail}): not downloaded`
  )
}

/** The first check reports it too, and every one after. */
export function logCacheUnusable (log: StoreLogger, source: RemoteSource, error: unknown): void {
  log.error({ source: source.shown, problem: describeLocalError(error) }, 'the snapshot cache directory is not usable')
}

export class SourceFollower implements ChainSource {
  readonly remote = true
  protected readonly metaFile: string
  private handTo: ChainSink | null = null

  private get file (): string {
    return this.store.file
  }

  protected readonly state: SourceStatus
  /** Not downloaded again until it changes (the store's rule: refusal-memory.ts). */
  protected readonly refused = new RefusalMemory<Validators>('object')
  /** Not noticed again until it changes. */
  protected noticed: Validators | null = null
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  private stopped = false
  protected readonly abort = new AbortController()
  private failuresInARow = 0
  private starting: Promise<void> | null = null

  constructor (
    protected readonly source: RemoteSource,
    protected readonly store: Omit<ChainServer, 'serve'>,
    protected readonly options: FollowOptions
  ) {
    this.metaFile = `${store.file}.source.json`
    this.state = {
      url: source.shown,
      etag: null,
      lastModified: null,
      lastChecked: null,
      lastChanged: null,
      lastError: null,
      checks: 0,
      errors: 0
    }
  }

  get shown (): string {
    return this.source.shown
  }

  protected get sink (): ChainSink {
    if (this.handTo === null) throw new Error('the source is not followed yet (start first)')
    return this.handTo
  }

  status (): SourceStatusJson {
    const { state } = this
    return {
      ...state,
      lastChecked: state.lastChecked?.toISOString() ?? null,
      lastChanged: state.lastChanged?.toISOString() ?? null,
      lastError: state.lastError === null
        ? null
        : { at: state.lastError.at.toISOString(), message: state.lastError.message }
    }
  }

  /** The cached copy first: a replica restarting during a store outage keeps serving. Never rejects. */
  start (sink: ChainSink): Promise<void> {
    this.handTo ??= sink
    this.starting ??= this.serveCachedCopy()
    return this.starting
  }

  protected async serveCachedCopy (): Promise<void> {
    try {
      await makeDirectory(this.options.cacheDir, OWNER_DIRECTORY)
      await tightenOwnFiles([this.file, this.metaFile], this.options.log)
      await this.sweepDownloads()
    } catch (error) {
      logCacheUnusable(this.options.log, this.source, error)
    }
    const cached = await this.readCachedCopy()
    // Pinned: the first load serves the pinned version's kept files, cached copy or not.
    const pinned = this.sink.pinned()
    if (cached !== null || pinned) {
      try {
        await this.store.start()
        if (cached !== null) Object.assign(this.state, { etag: cached.etag, lastModified: cached.lastModified })
        this.options.log.info(
          { source: this.source.shown, ...(pinned ? {} : { cached: this.file }) },
          pinned
            ? 'serving the pinned version while the source is checked'
            : 'serving the cached copy of the snapshot while the source is checked'
        )
      } catch (error) {
        this.options.log.error(
          { source: this.source.shown, ...(pinned ? {} : { cached: this.file }), err: error },
          pinned
            ? 'the pinned version does not load; waiting for the source'
            : 'the cached copy of the snapshot does not load; waiting for the source'
        )
      }
    }
    this.schedule(0)
  }

  /** Joins a check under way, which may have asked before what prompted the call: else `checkAgain`. */
  async checkNow (): Promise<void> {
    // Never beside the first load, nor after a stop (one asked for before it).
    await this.starting?.catch(() => {})
    if (this.stopped) return
    if (this.running !== null) return await this.running
    if (this.timer !== null) clearTimeout(this.timer)
    await this.tick()
  }

  async stop (): Promise<void> {
    this.stopped = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.abort.abort()
    await this.running?.catch(() => {})
  }

  protected schedule (seconds: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => { this.tick().catch(() => {}) }, seconds * 1000)
    this.timer.unref()
  }

  private async tick (): Promise<void> {
    this.running = this.check().finally(() => { this.running = null })
    await this.running
    this.schedule(this.nextWait())
  }

  /** With no snapshot yet, a doubling backoff from 1 s up to the poll time. */
  private nextWait (): number {
    const { pollSeconds } = this.options
    if (this.store.current() !== null || this.failuresInARow === 0) return pollSeconds
    return Math.min(2 ** (this.failuresInARow - 1), pollSeconds)
  }

  private async check (): Promise<void> {
    this.state.checks++
    this.state.lastChecked = new Date()
    try {
      await this.follow()
      this.failuresInARow = 0
    } catch (error) {
      this.failuresInARow++
      this.state.errors++
      const message = error instanceof SourceError ? error.message : describeLocalError(error)
      this.state.lastError = { at: new Date(), message }
      const serving = this.store.current() === null
        ? 'no snapshot is served yet'
        : 'still serving the last good snapshot'
      this.options.log.error(
        { source: this.source.shown, problem: message },
        `snapshot source check failed; ${serving}`
      )
    }
  }

  /** Null when nothing is newer, or while pinned (the newer one is only noticed). */
  protected async poll (): Promise<{ fetched: Extract<Fetched, { changed: true }>, signal: AbortSignal } | null> {
    const known = this.store.current() === null
      ? null
      : { etag: this.state.etag, lastModified: this.state.lastModified }
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(600_000)])
    const pinned = this.sink.pinned()
    if (!pinned) this.noticed = null
    const fetched = await this.source.fetch((pinned ? this.noticed : null) ?? this.refused.latest ?? known, signal)
    if (!fetched.changed) return null
    if (this.sink.holdBack({ object: this.source.shown, etag: fetched.validators.etag })) {
      await closeBody(fetched.body)
      this.noticed = fetched.validators
      return null
    }
    return { fetched, signal }
  }

  async resume (): Promise<void> {
    await this.sink.serve({ snapshot: this.file, changes: [] })
    await this.checkAgain()
  }

  async reloadAsked (): Promise<void> {
    this.options.log.info({}, 'SIGHUP: reloading the snapshot')
    await this.checkAgain()
  }

  /** One under way may have asked before an object was published, or noticed while pinned: it ends first. */
  async checkAgain (): Promise<void> {
    await this.running?.catch(() => {})
    await this.checkNow()
  }

  protected async follow (): Promise<void> {
    const polled = await this.poll()
    if (polled === null) return
    const { fetched, signal } = polled
    const limit = objectLimit(this.options.maxBytes)
    await refuseTooLarge(fetched, limit, 'the object')
    // The loader reads the format from the name: the temporary file keeps the extension.
    const temporary =
      `${this.file.slice(0, -extensionOf(this.source).length)}.download-${process.pid}${extensionOf(this.source)}`
    try {
      await downloadObject(fetched.body, temporary, { limit, length: fetched.length, signal })
      if (!await this.source.unchangedSince(fetched.validators, signal)) {
        throw new SourceError('the object changed while it was downloaded: it is downloaded again at the next check')
      }
      // A pin set during the download holds it back.
      if (this.sink.holdBack({ object: this.source.shown, etag: fetched.validators.etag })) {
        this.noticed = fetched.validators
        return
      }
      // Kept before the rename (ChainSink.serve).
      const outcome = await this.sink.serve({ snapshot: temporary, changes: [] })
      if (outcome !== 'loaded') {
        const what = this.refuse(outcome, fetched.validators) === 'memory'
          ? 'does not fit in the memory budget'
          : 'is not a valid snapshot'
        throw new SourceError(`the new object ${what} (${firstProblems(this.store.status().lastFailure?.problems ?? [])})`)
      }
      await rename(temporary, this.file)
      this.refused.forget()
      const copy: CachedCopy = { ...fetched.validators, url: this.source.shown, downloadedAt: new Date().toISOString() }
      const meta = JSON.stringify(copy)
      await writeThroughTemporary(this.metaFile, async emit => { await emit(meta) }, { ownerOnly: true })
      Object.assign(this.state, {
        etag: fetched.validators.etag,
        lastModified: fetched.validators.lastModified,
        lastChanged: new Date()
      })
    } finally {
      await rm(temporary, { force: true })
    }
  }

  /** What `validators` name was not served: remembered as the store's rule says, for the cause the store gave. */
  protected refuse (outcome: Exclude<ReloadOutcome, 'loaded'> | 'content', validators: Validators): RefusalCause {
    const cause = outcome === 'content'
      ? 'content'
      : outcome === 'failed' ? this.store.status().lastFailure?.cause ?? 'other' : 'other'
    const { etag, lastModified } = validators
    this.refused.remember(etag === null && lastModified === null ? null : `${etag}\n${lastModified}`, cause, validators)
    return cause
  }

  /** A killed process's downloads, each up to SNAPSHOT_MAX_MB. */
  private async sweepDownloads (): Promise<void> {
    const name = basename(this.file, extensionOf(this.source))
    const download = new RegExp(`^${name}\\.download-(\\d+)\\${extensionOf(this.source)}$`)
    // Another live replica sharing the directory may be downloading into its own.
    await sweepDeadDownloads(this.options.cacheDir, entry => download.exec(entry)?.[1])
  }

  private async readCachedCopy (): Promise<CachedCopy | null> {
    if ((await stat(this.file).catch(() => null))?.isFile() !== true) return null
    try {
      return JSON.parse(await readFile(this.metaFile, 'utf8')) as CachedCopy
    } catch {
      return { url: this.source.shown, etag: null, lastModified: null, downloadedAt: '' }
    }
  }
}

/** The operator's to fix. */
export function describeLocalError (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOSPC') return 'the cache disk is full (SNAPSHOT_CACHE_DIR): the download was dropped'
  if (code === 'EACCES' || code === 'EPERM') return 'the cache directory is not writable (SNAPSHOT_CACHE_DIR)'
  if (code !== undefined) return `the cache directory failed (${code})`
  return (error as Error).message
}
