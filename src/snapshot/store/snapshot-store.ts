// Holds the model being served and swaps in a new one in a single assignment. Readers take the model
// once per request (`current()`), so a request never sees two snapshots. The first load is started by
// `start()` and may take as long as the file needs; until it ends there is no model. Reloads never
// overlap: one asked for while another runs makes exactly one more run after it.
//
// Change files: what is served is a chain, a snapshot then its change files in order. `serve`
// moves to a chain: only the new change files are applied when the served chain is its beginning, else the
// state is built again from the snapshot (kept as loaded while its derived versions are served: an edited
// or removed change file costs no reload of the snapshot). With `changesDir`, the store's own chain is the
// snapshot file and that directory's `*.jsonl` files in name order (chain-on-disk.ts).
import { EventEmitter } from 'node:events'
import { stat } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import { SnapshotError, TooBigError, type MemoryShortfall } from '../../errors.js'
import { SnapshotLoader } from '../load/load-snapshot.js'
import type { MemoryBudget, MemoryGuard } from '../memory-budget.js'
import { collectSoon } from '../model/item-memory.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import type { ChangeSet } from '../changes/change-set.js'
import { readChangeFile } from '../changes/read-change-file.js'
import { deriveVersion, prepareForChanges } from '../model/derive-version.js'
import { changeFilesIn, fileDigest, notAChangeFile } from './chain-on-disk.js'

export interface StoreLogger {
  info: (fields: object, message: string) => void
  warn: (fields: object, message: string) => void
  error: (fields: object, message: string) => void
}

export interface ReloadFailure {
  at: Date
  /** One line per problem, as the validator reported them. */
  problems: readonly string[]
}

/** Why a file was refused: its contents (or it could not be read), or the memory budget. */
export type RefusalReason = 'invalid' | 'too_big'

/** A file a reload refused: which one, when, why, and the validator's report. */
export interface RefusedFile extends ReloadFailure {
  file: string
  reason: RefusalReason
}

/** The last file refused for memory: its estimated peak, and what the budget had free. */
export interface TooBigRefusal extends MemoryShortfall {
  at: Date
  file: string
}

/** How many refused files the store remembers, for the console and /-/status (newest first). */
export const RECENT_FAILURES = 10

export interface ReloadStatus {
  succeeded: number
  failed: number
  /** Failures since the last success; Hollow's "refreshes failed in a row". */
  failedInARow: number
  lastFailure: ReloadFailure | null
  /** When the first of the failures in a row happened: since then the file is not the one served. */
  staleSince: Date | null
}

/**
 * `superseded`: the file changed while it was read (an editor saving in place truncates, then writes),
 * whether the load failed or not; it is not a failure, nothing is swapped, and the file is loaded again.
 */
export type ReloadOutcome = 'loaded' | 'failed' | 'missing' | 'superseded'

/** A snapshot and its change files, paths in apply order. */
export interface Chain {
  snapshot: string
  changes: readonly string[]
}

/** A file of the served chain: where, its stamp when read, and its content's digest. */
export interface ChainFile {
  readonly file: string
  readonly stamp: string | null
  readonly digest: string
}

/** Change files applied and refused since start (status, metrics). */
export interface ChangeFileCounts {
  applied: number
  refused: number
}

export interface StoreOptions {
  /**
   * Loads a snapshot file; the real loader unless a test replaces it. `serving`: a model is served while
   * this one loads, so the load leaves a core to the requests (parse-threads.ts, threadsFor).
   */
  load?: (file: string, options: { serving: boolean }) => Promise<SnapshotModel>
  log?: StoreLogger
  /** The memory budget's guard, given to the store's loader (not used when `load` is given). */
  memory?: MemoryGuard
  /**
   * How long a failed load waits before it checks whether the file was still being written; the
   * watcher's quiet time is the natural value. 0 checks at once.
   */
  settleMs?: number
  /** What the first load serves instead of `file` (and its change files): a pinned version's kept files. */
  first?: Chain | null
  /**
   * The editors' change files: the store's own chain is the snapshot then this directory's
   * `*.jsonl` files in name order. Null or absent: the snapshot alone (a fleet's follower calls `serve`).
   */
  changesDir?: string | null
  /** Reads a change file; the real reader unless a test replaces it. */
  readChanges?: (file: string, options: { serving: boolean }) => Promise<ChangeSet>
  /**
   * Hands the served model to the serving threads (serving-pool.ts) at the end of every load and reload:
   * the first load resolves, and a reload is told to listeners, once it resolves. Null: none.
   */
  publish?: ((model: SnapshotModel) => Promise<void>) | null
}

const SILENT: StoreLogger = { info () {}, warn () {}, error () {} }

/** Emits `reloaded` (outcome) after every reload it attempts (not the first load), so callers can await a swap. */
export class SnapshotStore extends EventEmitter<{ reloaded: [ReloadOutcome] }> {
  private model: SnapshotModel | null = null
  /**
   * The first load. It holds no model: a promise resolved with the first one kept that model reachable for
   * the life of the process, every reload after it included (found in a heap snapshot after a reload).
   */
  private first: Promise<void> | null = null
  private readonly load: (file: string, options: { serving: boolean }) => Promise<SnapshotModel>
  private readonly log: StoreLogger
  private readonly settleMs: number
  private readonly firstChain: Chain | null
  private running: Promise<ReloadOutcome> | null = null
  private again = false
  private readonly counters: Omit<ReloadStatus, 'lastFailure'> = { succeeded: 0, failed: 0, failedInARow: 0, staleSince: null }
  /** Failed reloads by reason (their sum is `failed`). */
  private readonly byReason: Record<RefusalReason, number> = { invalid: 0, too_big: 0 }
  private tooBig: TooBigRefusal | null = null
  /** The budget loads are held to; null without a guard. */
  readonly budget: MemoryBudget | null
  /** Newest first, at most RECENT_FAILURES: an editor's last few bad saves, not the whole day's. The first is the last failure. */
  private refused: RefusedFile[] = []
  readonly changesDir: string | null
  private readonly readChanges: (file: string, options: { serving: boolean }) => Promise<ChangeSet>
  private readonly publish: ((model: SnapshotModel) => Promise<void>) | null
  /** The served chain's snapshot as loaded, kept while versions derived from it are served; and its files. */
  private root: SnapshotModel | null = null
  private chain: { snapshot: ChainFile, changes: ChainFile[] } | null = null
  private rootReady: Promise<void> | null = null
  private readonly changeCounts: ChangeFileCounts = { applied: 0, refused: 0 }
  /** Change files have come (a chain with some), or may (a follower serves chains): the root is made ready for them. */
  private changesExpected = false

  constructor (readonly file: string, options: StoreOptions = {}) {
    super()
    this.log = options.log ?? SILENT
    const loader = new SnapshotLoader({ log: this.log, memory: options.memory ?? null })
    this.budget = options.memory?.budget ?? null
    this.load = options.load ?? (async (file, loadOptions) => await loader.load(file, loadOptions))
    this.settleMs = options.settleMs ?? 0
    this.firstChain = options.first ?? null
    this.changesDir = options.changesDir ?? null
    this.readChanges = options.readChanges ?? (async (file, readOptions) => await readChangeFile(file, readOptions))
    this.publish = options.publish ?? null
  }

  /** The served model; null until the first load has ended. */
  current (): SnapshotModel | null {
    return this.model
  }

  /**
   * Loads the file for the first time, once however often it is called, and resolves with the model served
   * then. Rejects with the SnapshotError of a bad file: a service must not start on one.
   */
  async start (): Promise<SnapshotModel> {
    this.first ??= this.loadFirst()
    await this.first
    return this.model as SnapshotModel
  }

  /**
   * Like a reload: a file written to while it was read is read again, never served half. With change files,
   * the snapshot's are applied after it; a bad one is refused as a reload's would be, not fatal.
   */
  private async loadFirst (): Promise<void> {
    const first = this.firstChain?.snapshot ?? this.file
    for (;;) {
      const read = await this.readOnce(first, this.load)
      if (read === 'changed') continue
      if ('error' in read) throw read.error
      this.model = read.model
      this.servedAlone(read.model, first, read.stamp)
      break
    }
    // A pinned version is served as it was kept (its own change files), never with the change files on disk.
    const { firstChain, changesDir } = this
    if (firstChain !== null ? firstChain.changes.length === 0 : changesDir === null) {
      await this.published()
      return
    }
    for (;;) {
      const outcome = await this.applyChain(firstChain ?? await this.chainOnDisk(changesDir as string), Date.now())
      if (outcome !== 'superseded') break
    }
    await this.published()
  }

  /** The served model handed to the serving threads, if there are any: only a run's last state is (ADR 029). */
  private async published (): Promise<void> {
    if (this.publish !== null && this.model !== null) await this.publish(this.model)
  }

  status (): ReloadStatus {
    const newest = this.refused[0]
    return { ...this.counters, lastFailure: newest === undefined ? null : { at: newest.at, problems: newest.problems } }
  }

  /** Failed reloads by reason: a file's contents (or it could not be read), or the memory budget. */
  refusals (): Record<RefusalReason, number> {
    return { ...this.byReason }
  }

  /** The last file refused because it would not fit in the memory budget, or null. */
  lastTooBig (): TooBigRefusal | null {
    return this.tooBig === null ? null : { ...this.tooBig }
  }

  /**
   * The served chain's files as they were read: paths, stamps (null when unknown) and digests; what a kept
   * copy is checked against. Null before the first load.
   */
  servedFiles (): { snapshot: Readonly<ChainFile>, changes: Array<Readonly<ChainFile>> } | null {
    return this.chain === null ? null : { snapshot: { ...this.chain.snapshot }, changes: this.chain.changes.map(file => ({ ...file })) }
  }

  /** Change files applied and refused since start. */
  changeFiles (): ChangeFileCounts {
    return { ...this.changeCounts }
  }

  /**
   * Serves `chain`: when its snapshot is the served one (the same content) and the served
   * change files begin it (the same names and contents), only the new ones are applied, each alone;
   * otherwise the state is built again from the chain (a shorter one too: a step back). A bad change file
   * is refused, and the ones after it wait: the state served is the chain up to it, unless that would take
   * back a change file served now (the served state then stays: applyChain). Runs after any other
   * reload, never merged with one; resolves with its own outcome ('failed' when a file was refused).
   */
  serve (chain: Chain): Promise<ReloadOutcome> {
    // A follower's chains get change files sooner or later: the first should pay only for itself.
    this.changesExpected = true
    return this.runAlone(async () => await this.runOnce(async started => {
      // A file written to while it was read: the same chain again (its files are the caller's to name).
      for (;;) {
        const outcome = await this.applyChain(chain, started)
        if (outcome !== 'superseded') return outcome
      }
    }))
  }

  /** The last RECENT_FAILURES files a reload refused, newest first. */
  recentFailures (): readonly RefusedFile[] {
    return this.refused.map(refusal => ({ ...refusal }))
  }

  /**
   * Loads the file again and serves it if it is valid. Resolves when the newest request for a reload
   * has been carried out, with the outcome of the last run. `file`: another file to load instead (a
   * remote source's download, follow-source.ts; a kept version's, served-versions.ts); such a load runs on
   * its own, after any other, and resolves with its own outcome, never merged with a reload of the store's
   * file. While change files are served, another file is served as a chain of it alone: from the kept root,
   * with no load, when its content is the root's.
   */
  reload (file: string = this.file): Promise<ReloadOutcome> {
    // While change files are served, another snapshot alone is the chain of it alone: a kept version's copy
    // of the served root (a rollback from `<snapshot>+<change>` to `<snapshot>`) is then served from the root.
    if (file !== this.file) return this.runAlone(async () => await this.runOnce(async started => (this.chain?.changes.length ?? 0) > 0 ? await this.applyChain({ snapshot: file, changes: [] }, started) : await this.loadOnce(file, started)))
    if (this.running !== null) {
      this.again = true
      return this.running
    }
    const run = async (): Promise<ReloadOutcome> => {
      let outcome: ReloadOutcome
      do {
        this.again = false
        outcome = await this.runOnce(async started => await this.ownChain(started))
      } while (this.again)
      return outcome
    }
    this.running = run().finally(() => { this.running = null })
    return this.running
  }

  /** One reload, told to listeners. One asked for during the first load runs after it. */
  private async runOnce (step: (started: number) => Promise<ReloadOutcome>): Promise<ReloadOutcome> {
    await this.first?.catch(() => {})
    const outcome = await step(Date.now())
    if (outcome === 'superseded') this.again = true
    await this.published()
    this.emit('reloaded', outcome)
    return outcome
  }

  /** The store's own file: the snapshot alone, or with its change files on disk. */
  private async ownChain (started: number): Promise<ReloadOutcome> {
    if (this.changesDir === null) return await this.loadOnce(this.file, started)
    const chain = await this.chainOnDisk(this.changesDir)
    // No change file, served or on disk: a reload as ever (SIGHUP reads the file again, even unchanged).
    if (chain.changes.length === 0 && (this.chain?.changes.length ?? 0) === 0) return await this.loadOnce(this.file, started)
    return await this.applyChain(chain, started)
  }

  /** The snapshot file and the change files in `dir`; a directory there means change files are expected. */
  private async chainOnDisk (dir: string): Promise<Chain> {
    if (!this.changesExpected && await fileStamp(dir) === 'not a regular file') this.changesExpected = true
    return { snapshot: this.file, changes: await changeFilesIn(dir) }
  }

  /** Runs `run` after any other reload, on its own. */
  private async runAlone (run: () => Promise<ReloadOutcome>): Promise<ReloadOutcome> {
    while (this.running !== null) await this.running.catch(() => {})
    this.running = run().finally(() => {
      this.running = null
      // A reload of the store's own file asked for meanwhile runs now.
      if (this.again) {
        this.again = false
        this.reload().catch(() => {})
      }
    })
    return await this.running
  }

  /**
   * Resolves when no reload is running (for a clean shutdown). A first load still running is not waited
   * for: it has nothing to finish, and a large one would hold a SIGTERM for as long as it takes.
   */
  async idle (): Promise<void> {
    while (this.running !== null) await this.running
  }

  /**
   * One read of the file, or 'changed' when the file was written to while it was read: what was read may
   * then be a valid beginning of it (a JSON Lines file cut at a line's end is one), or an empty or
   * half-written file (a save in place truncates, then writes). Its last write brings the file whole.
   */
  private async readOnce<T extends SnapshotModel | ChangeSet> (file: string, reader: (file: string, options: { serving: boolean }) => Promise<T>): Promise<{ model: T, stamp: string | null } | { error: unknown } | 'changed'> {
    const before = await fileStamp(file)
    let read: { model: T, stamp: string | null } | { error: unknown }
    try {
      read = { model: await reader(file, { serving: this.model !== null }), stamp: before }
    } catch (error) {
      // What the failed load had rendered is garbage in shared memory, which V8 does not count: asked for
      // now, not at some later collection (item-memory.ts).
      collectSoon()
      // Editors delete before they recreate: nothing to wait for.
      if (isMissing(error)) return { error }
      if (this.settleMs > 0) await delay(this.settleMs)
      read = { error }
    }
    if (before === await fileStamp(file)) return read
    this.log.warn({ snapshot: file }, 'snapshot file changed while it was read; loading it again')
    // Never served: its memory goes as a replaced model's does.
    if ('model' in read && 'memory' in read.model) read.model.memory.retire()
    return 'changed'
  }

  /** A snapshot alone (no change files: `changesDir` null, or a remote source's download). */
  private async loadOnce (file: string, started = Date.now()): Promise<ReloadOutcome> {
    const read = await this.readOnce(file, this.load)
    // Loading again (not waiting for the watcher) also covers SIGHUP reloads.
    if (read === 'changed') return 'superseded'
    if ('error' in read) return this.refuse(file, read.error)
    const oldRoot = this.root
    this.swap(read.model)
    if (oldRoot !== null && oldRoot !== read.model) oldRoot.memory.retire()
    this.servedAlone(read.model, file, read.stamp)
    this.loaded(file, started)
    return 'loaded'
  }

  /** A snapshot served without change files: the root of a chain of none, so that `serve` can add some. */
  private servedAlone (model: SnapshotModel, file: string, stamp: string | null): void {
    this.setRoot(model)
    this.chain = { snapshot: { file, stamp, digest: model.info.version }, changes: [] }
  }

  /**
   * Serves `chain`: its new change files on the served state, each swapped in alone; or the whole chain
   * built again beside the served state (from the kept root when the snapshot is the same, else from a new
   * load) and swapped in once, so that a request never sees a state between two chains.
   */
  private async applyChain (chain: Chain, started: number): Promise<ReloadOutcome> {
    if (chain.changes.length > 0) this.changesExpected = true
    if (this.changesExpected && this.root !== null && this.rootReady === null) this.setRoot(this.root)
    const matched = await this.servedPrefix(chain)
    const prefix = matched?.changes.length ?? -1
    const incremental = prefix !== -1 && prefix === this.chain?.changes.length
    // Built again: from the root, every change file read again (the versions between are not kept).
    const from = incremental ? prefix : 0
    let root = this.root
    // The files as `chain` names them, recorded once served: a copy of the served files (a kept version's, a
    // download's) is compared by its stamp from then on, not read whole again for its digest. Not before: a
    // failed serve would leave the record naming a kept version's files that a prune may remove.
    let snapshot = matched?.snapshot
    const files: ChainFile[] = incremental ? [...(matched as { changes: ChainFile[] }).changes] : []
    let state: SnapshotModel
    if (prefix === -1) {
      const read = await this.readOnce(chain.snapshot, this.load)
      if (read === 'changed') return 'superseded'
      if ('error' in read) return this.refuse(chain.snapshot, read.error)
      root = read.model
      snapshot = { file: chain.snapshot, stamp: read.stamp, digest: root.info.version }
      state = root
    } else {
      // The same snapshot: what a load made ready in the background serves this chain too.
      await this.rootReady
      state = incremental ? this.model as SnapshotModel : root as SnapshotModel
    }
    /** A state built beside the served one and never served: let go. */
    const drop = (model: SnapshotModel): void => { if (model !== this.model && model !== root && model !== this.root) model.memory.retire() }
    /** The state built here and a root loaded for it: let go when it is not served. */
    const dropAll = (): void => {
      drop(state)
      if (root !== this.root) root?.memory.retire()
    }
    let outcome: ReloadOutcome = 'loaded'
    for (const [at, file] of chain.changes.entries()) {
      if (at < from) continue
      const unfit = await notAChangeFile(file)
      const read = unfit === null ? await this.readOnce(file, this.readChanges) : { error: new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [unfit]) }
      if (read === 'changed') {
        dropAll()
        return 'superseded'
      }
      if ('error' in read) {
        this.changeCounts.refused++
        outcome = this.refuse(file, read.error, 'change file')
        // A bad file changes nothing: the served snapshot's chain built again that would stop
        // short of a change file served now (one edited into a bad file, or a bad one put before it) is not
        // served; the served state stays until the file is fixed or removed. A bad file after all that is
        // served only waits, and so does one after a new snapshot, which is served up to it.
        if (prefix !== -1 && await this.servesAnyOf(chain.changes[at] as string, chain.changes.slice(at + 1))) {
          dropAll()
          return outcome
        }
        break
      }
      const next = await deriveVersion(state, read.model)
      const chainFile = { file, stamp: read.stamp, digest: read.model.digest }
      this.changeCounts.applied++
      this.appliedLog(next, file, started)
      files.push(chainFile)
      if (incremental) {
        this.swap(next)
        this.chain = { snapshot: snapshot as ChainFile, changes: [...files] }
        this.succeeded()
      } else {
        drop(state)
      }
      state = next
    }
    if (incremental) {
      // Nothing new: the same state, named as `chain` names it; a file saved again as it was after a
      // refused save is served again, in effect.
      if (from === chain.changes.length) {
        this.chain = { snapshot: snapshot as ChainFile, changes: files }
        if (outcome === 'loaded' && this.counters.failedInARow > 0) this.succeeded()
      }
      return outcome
    }
    // The chain built again: swapped in at once, and the root it was built from kept.
    const oldRoot = this.root
    this.swap(state)
    if (oldRoot !== null && oldRoot !== root && oldRoot !== state) oldRoot.memory.retire()
    this.chain = { snapshot: snapshot as ChainFile, changes: files }
    if (root !== this.root) this.setRoot(root as SnapshotModel)
    if (outcome === 'loaded') this.succeeded()
    this.log.info({ snapshot: chain.snapshot, changes: files.map(file => file.file), version: state.info.version, generatedAt: state.info.generatedAt, items: state.itemCounts(), ms: Date.now() - started }, prefix === -1 ? 'snapshot reloaded' : files.length === 0 ? 'the snapshot served again from the one loaded' : 'change files applied again from the snapshot')
    return outcome
  }

  /**
   * How much of `chain` is served, as the files of `chain` that hold it: its snapshot and the change files
   * (from the first) the served state applied, when the served snapshot is its snapshot (then the root is
   * kept); null when the snapshot is another (a new root must be loaded). The same file, or the same
   * content: stamps first, digests when they differ.
   */
  private async servedPrefix (chain: Chain): Promise<{ snapshot: ChainFile, changes: ChainFile[] } | null> {
    const served = this.chain
    const snapshot = served === null || this.root === null ? null : await asServed(served.snapshot, chain.snapshot)
    if (served === null || snapshot === null) return null
    const changes: ChainFile[] = []
    for (let n = 0; n < served.changes.length && n < chain.changes.length; n++) {
      const same = await asServed(served.changes[n] as ChainFile, chain.changes[n] as string)
      if (same === null) break
      changes.push(same)
    }
    return { snapshot, changes }
  }

  /**
   * Whether the served state applied `bad` (by its path: its content is another now) or any of `after` (by
   * content, as `servedPrefix` compares: after a pin or a rollback the served files are a kept version's).
   */
  private async servesAnyOf (bad: string, after: readonly string[]): Promise<boolean> {
    const served = this.chain?.changes ?? []
    if (served.some(read => read.file === bad)) return true
    for (const file of after) {
      for (const read of served) if (await asServed(read, file) !== null) return true
    }
    return false
  }

  private appliedLog (model: SnapshotModel, file: string, started: number): void {
    const applied = model.info.changes?.at(-1)
    this.log.info({ changes: file, version: model.info.version, upserts: applied?.upserts, deletes: applied?.deletes, absentDeletes: applied?.absentDeletes, garbageBytes: model.garbageBytes, ms: Date.now() - started }, 'change file applied')
  }

  /** The snapshot of a chain, served as its root: kept while versions derived from it are served. */
  private setRoot (model: SnapshotModel): void {
    this.root = model
    this.rootReady = null
    // Only where change files come: an index of pks and of each item's companies, which no other replica needs.
    if (!this.changesExpected) return
    // Its slot spaces made now, in slices, rather than when the first change file comes (derive-version.ts).
    this.rootReady = prepareForChanges(model).catch((error: unknown) => this.log.error({ err: error }, 'preparing the snapshot for change files failed'))
  }

  /** `model` served in one assignment; the one it replaces retired unless it is the chain's root. */
  private swap (model: SnapshotModel): void {
    const old = this.model
    this.model = model
    // Its memory goes once no answer still sends from it (item-memory.ts).
    if (old !== null && old !== model && old !== this.root) old.memory.retire()
  }

  private loaded (file: string, started: number): void {
    const model = this.model as SnapshotModel
    this.succeeded()
    this.log.info({ snapshot: file, generatedAt: model.info.generatedAt, items: model.itemCounts(), ms: Date.now() - started }, 'snapshot reloaded')
  }

  private succeeded (): void {
    this.counters.succeeded++
    this.counters.failedInARow = 0
    this.counters.staleSince = null
  }

  /** A file that cannot be served: reported, and the served state stays. */
  private refuse (file: string, error: unknown, what = 'snapshot'): ReloadOutcome {
    if (isMissing(error)) {
      // The new file's own event brings the next load.
      this.log.warn({ [what === 'snapshot' ? 'snapshot' : 'changes']: file }, `${what === 'snapshot' ? 'snapshot file' : what} is missing; still serving the last good state`)
      return 'missing'
    }
    // The report is shown in /-/status and /-/readyz: an unexpected error's own message stays in the log.
    const problems = error instanceof SnapshotError ? error.problems : [`unexpected error while loading the ${what} (see the service's log)`]
    const at = new Date()
    const reason: RefusalReason = error instanceof TooBigError ? 'too_big' : 'invalid'
    if (error instanceof TooBigError) this.tooBig = { at, file, ...error.shortfall }
    this.counters.failed++
    this.counters.failedInARow++
    this.byReason[reason]++
    this.refused = [{ at, file, reason, problems }, ...this.refused].slice(0, RECENT_FAILURES)
    this.counters.staleSince ??= at
    this.log.error({ [what === 'snapshot' ? 'snapshot' : 'changes']: file, reason, problems, ...(error instanceof SnapshotError ? {} : { err: error }) }, `${what} reload failed; ${this.model === null ? 'no snapshot is served yet' : 'still serving the last good snapshot'}\n${error instanceof Error ? error.message : String(error)}`)
    return 'failed'
  }
}

/**
 * `file` as the chain file read before, when it is that file unchanged or holds the same bytes (a copy under
 * another name, or the same bytes saved again): its name and stamp now, with the digest read. Null otherwise.
 */
async function asServed (read: ChainFile, file: string): Promise<ChainFile | null> {
  const stamp = await fileStamp(file)
  if (stamp === null) return null
  if (file === read.file && stamp === read.stamp) return read
  // Another size is other bytes: not read whole for a digest, just before the load reads it whole again.
  if (read.stamp !== null && sizeOf(stamp) !== sizeOf(read.stamp)) return null
  const same = await fileDigest(file).then((digest: string) => digest === read.digest, () => false)
  return same ? { file, stamp, digest: read.digest } : null
}

function isMissing (error: unknown): boolean {
  return error instanceof SnapshotError && error.code === 'SNAPSHOT_ERR_UNREADABLE' && error.problems[0] === 'the file does not exist'
}

/** The size a fileStamp names (its third field), or null for one that names none. */
function sizeOf (stamp: string): string | null {
  return stamp.split(':')[2] ?? null
}

/** Identifies one version of a file on disk; null when it cannot be read. */
export async function fileStamp (file: string): Promise<string | null> {
  try {
    const s = await stat(file, { bigint: true })
    // A pipe or a device has no versions to tell apart (writing into a pipe changes its times).
    if (!s.isFile()) return 'not a regular file'
    // Not the ctime: a hard link to the file (a kept version of a download) changes it, and the served
    // file would be read whole again for its digest at the next compare. A write sets the mtime; only a
    // writer that puts the old mtime back on a file of the same size goes unseen.
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`
  } catch {
    return null
  }
}
