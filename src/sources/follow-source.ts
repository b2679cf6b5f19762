// Follows a remote snapshot (remote-source.ts): polls it, downloads a changed object to a temporary file, and renames
// it over the cached copy only once the store has loaded it: the cached copy is always the last good snapshot.
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { createHash } from 'node:crypto'
import type { ImageShelf } from '../snapshot/images/image-shelf.js'
import type { ChainServer, StoreLogger } from '../snapshot/store/snapshot-store.js'
import type { ChainSink, ChainSource, SourceStatusJson } from './chain-source.js'
import { type Fetched, type RemoteSource, type Validators } from './remote-source.js'
import { closeBody, downloadObject } from './download-object.js'
import { isAlive, writeThroughTemporary } from '../write-through-temporary.js'
import { SourceError } from '../errors.js'
import { makeDirectory } from '../make-directory.js'

export interface FollowOptions {
  cacheDir: string
  pollSeconds: number
  /** A download larger than this is refused (and not kept). */
  maxBytes: number
  log: StoreLogger
  /** STATE_DIR's version images: a manifest's image is downloaded there. */
  images?: ImageShelf | null
}

interface SourceStatus {
  url: string
  /** The version served, as the source names it (its ETag). */
  etag: string | null
  lastModified: string | null
  lastChecked: Date | null
  lastChanged: Date | null
  lastError: { at: Date, message: string } | null
  checks: number
  errors: number
}

/** What is known of a cached copy or manifest, kept beside it. */
export interface CachedCopy extends Validators {
  url: string
  downloadedAt: string
}

/** `prefix-<digest of the source>`: one name per source, so replicas may share a directory. */
export function cacheName (prefix: string, source: RemoteSource): string {
  return `${prefix}-${createHash('sha256').update(source.shown).digest('hex').slice(0, 12)}`
}

/** Where a source's last good snapshot is kept. */
export function cachedCopyPath (source: RemoteSource, cacheDir: string): string {
  return join(cacheDir, cacheName('snapshot', source) + extensionOf(source))
}

/** A followed snapshot's extension: openSource refuses a SNAPSHOT_URL without one. */
function extensionOf (source: RemoteSource): string {
  return source.extension ?? ''
}

/** The first problems of a report, for a one-line message. */
export function firstProblems (problems: readonly string[]): string {
  return `${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`
}

/** Refuses (and closes) a body the source says is larger than SNAPSHOT_MAX_MB. */
export async function refuseTooLarge (fetched: { length: number | null, body: AsyncIterable<Uint8Array> },
  maxBytes: number, what: string): Promise<void> {
  if (fetched.length === null || fetched.length <= maxBytes) return
  await closeBody(fetched.body)
  throw new SourceError(
    `${what} is ${fetched.length} bytes, more than SNAPSHOT_MAX_MB allows (${maxBytes}): not downloaded`
  )
}

/** Logs that SNAPSHOT_CACHE_DIR is not usable: the first check reports it too, and every one after. */
export function logCacheUnusable (log: StoreLogger, source: RemoteSource, error: unknown): void {
  log.error({ source: source.shown, problem: describeLocalError(error) }, 'the snapshot cache directory is not usable')
}

/** Followed by polling: the manifest follower (follow-manifest.ts) polls alike, and does more per change. */
export class SourceFollower implements ChainSource {
  readonly remote = true
  protected readonly metaFile: string
  /** Where chains go (the operator's versions), from `start` on. */
  private handTo: ChainSink | null = null

  /** The cached copy, the store's own file (cachedCopyPath): the last good snapshot from this source. */
  private get file (): string {
    return this.store.file
  }

  protected readonly state: SourceStatus
  /** The validators of the last object refused by the loader: not downloaded again until it changes. */
  protected refused: Validators | null = null
  /** The validators of the last object noticed while held: not noticed again until it changes. */
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

  /**
   * Serves the cached copy if there is one (a replica restarting during a store outage keeps serving),
   * then checks the source at once and every `pollSeconds`. Never rejects: problems are logged and shown.
   */
  start (sink: ChainSink): Promise<void> {
    this.handTo ??= sink
    this.starting ??= this.serveCachedCopy()
    return this.starting
  }

  protected async serveCachedCopy (): Promise<void> {
    try {
      await makeDirectory(this.options.cacheDir)
      await this.sweepDownloads()
    } catch (error) {
      logCacheUnusable(this.options.log, this.source, error)
    }
    const cached = await this.readCachedCopy()
    // Pinned: the store's first load serves the pinned version's kept files, cached copy or not.
    const pinned = this.sink.pinned()
    if (cached !== null || pinned) {
      try {
        await this.store.start()
        // What is held: a newer object is noticed against it while pinned, and loaded by unpin.
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

  /**
   * Checks now, or joins the check under way; resolves when that check has ended. A check under way may have
   * asked the source before what prompted the call: `checkAgain` for one begun after it.
   */
  async checkNow (): Promise<void> {
    // After the cached copy is served (or found wanting), never beside that first load.
    await this.starting?.catch(() => {})
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

  /** Every poll when there is a snapshot; with none yet, a doubling backoff from 1 s up to the poll time. */
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

  /**
   * Asks the source for an object newer than the one served: null when there is none, or while pinned, when the
   * newer one is only noticed (its body dropped, not asked for again until it changes). Every check starts here.
   */
  protected async poll (): Promise<{ fetched: Extract<Fetched, { changed: true }>, signal: AbortSignal } | null> {
    const known = this.store.current() === null
      ? null
      : { etag: this.state.etag, lastModified: this.state.lastModified }
    // A check taking longer than 10 minutes is given up.
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(600_000)])
    const pinned = this.sink.pinned()
    if (!pinned) this.noticed = null
    const fetched = await this.source.fetch((pinned ? this.noticed : null) ?? this.refused ?? known, signal)
    if (!fetched.changed) return null
    if (this.sink.holdBack({ object: this.source.shown, etag: fetched.validators.etag })) {
      await closeBody(fetched.body)
      this.noticed = fetched.validators
      return null
    }
    return { fetched, signal }
  }

  /** Serves what is held (after a pin: its cached copy), then checks the source for anything newer. */
  async resume (): Promise<void> {
    await this.sink.serve({ snapshot: this.file, changes: [] })
    await this.checkAgain()
  }

  async reloadAsked (): Promise<void> {
    this.options.log.info({}, 'SIGHUP: reloading the snapshot')
    await this.checkAgain()
  }

  /**
   * A check begun after this call (SIGHUP, an unpin): one under way may have asked the source before an
   * object was published, or begun while pinned and noticed what it did not load; it ends first.
   */
  async checkAgain (): Promise<void> {
    await this.running?.catch(() => {})
    await this.checkNow()
  }

  protected async follow (): Promise<void> {
    const polled = await this.poll()
    if (polled === null) return
    const { fetched, signal } = polled
    await refuseTooLarge(fetched, this.options.maxBytes, 'the object')
    // The loader reads the format from the name: the temporary file keeps the extension.
    const temporary =
      `${this.file.slice(0, -extensionOf(this.source).length)}.download-${process.pid}${extensionOf(this.source)}`
    try {
      await downloadObject(fetched.body, temporary, { maxBytes: this.options.maxBytes, length: fetched.length, signal })
      if (!await this.source.unchangedSince(fetched.validators, signal)) {
        throw new SourceError('the object changed while it was downloaded: it is downloaded again at the next check')
      }
      // The same loader, the same rules: a bad object leaves the last good snapshot served.
      // A pin set during the download holds it back: noticed, not served over the pinned version.
      if (this.sink.holdBack({ object: this.source.shown, etag: fetched.validators.etag })) {
        this.noticed = fetched.validators
        return
      }
      // Served, then kept (ChainSink.serve), before the rename.
      const outcome = await this.sink.serve({ snapshot: temporary, changes: [] })
      if (outcome !== 'loaded') {
        this.refused = fetched.validators
        const problems = this.store.status().lastFailure?.problems ?? []
        throw new SourceError(`the new object is not a valid snapshot (${firstProblems(problems)})`)
      }
      await rename(temporary, this.file)
      this.refused = null
      const copy: CachedCopy = { ...fetched.validators, url: this.source.shown, downloadedAt: new Date().toISOString() }
      // A name of this process's own: replicas may share the directory.
      await writeThroughTemporary(this.metaFile, async emit => { await emit(JSON.stringify(copy)) })
      Object.assign(this.state, {
        etag: fetched.validators.etag,
        lastModified: fetched.validators.lastModified,
        lastChanged: new Date()
      })
    } finally {
      await rm(temporary, { force: true })
    }
  }

  /** Downloads a killed process left behind (each up to SNAPSHOT_MAX_MB): this source's, in this directory. */
  private async sweepDownloads (): Promise<void> {
    const name = basename(this.file, extensionOf(this.source))
    for (const entry of await readdir(this.options.cacheDir)) {
      const pid = new RegExp(`^${name}\\.download-(\\d+)\\${extensionOf(this.source)}$`).exec(entry)?.[1]
      // Another live replica sharing the directory may be downloading into its own.
      if (pid !== undefined && !isAlive(Number(pid))) await rm(join(this.options.cacheDir, entry), { force: true })
    }
  }

  private async readCachedCopy (): Promise<CachedCopy | null> {
    if ((await stat(this.file).catch(() => null))?.isFile() !== true) return null
    try {
      return JSON.parse(await readFile(this.metaFile, 'utf8')) as CachedCopy
    } catch {
      // A copy without its validators is still a snapshot: it is served, and downloaded again.
      return { url: this.source.shown, etag: null, lastModified: null, downloadedAt: '' }
    }
  }
}

/** A local failure (the cache disk) in words: the operator's to fix. */
function describeLocalError (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOSPC') return 'the cache disk is full (SNAPSHOT_CACHE_DIR): the download was dropped'
  if (code === 'EACCES' || code === 'EPERM') return 'the cache directory is not writable (SNAPSHOT_CACHE_DIR)'
  if (code !== undefined) return `the cache directory failed (${code})`
  return (error as Error).message
}
