// Holds the model being served and swaps in a new one in a single assignment. Readers take the model
// once per request (`current()`), so a request never sees two snapshots. The first load is started by
// `start()` and may take as long as the file needs; until it ends there is no model. Reloads never
// overlap: one asked for while another runs makes exactly one more run after it.
import { EventEmitter } from 'node:events'
import { stat } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import { SnapshotError, TooBigError, type MemoryShortfall } from '../../errors.js'
import { SnapshotLoader } from '../load/load-snapshot.js'
import type { MemoryBudget, MemoryGuard } from '../memory-budget.js'
import { collectSoon } from '../model/item-memory.js'
import type { SnapshotModel } from '../model/snapshot-model.js'

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

/** Why a file was refused: its contents (or it could not be read), or the memory budget (contract §7). */
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
  /** The file the first load reads instead of `file`: a pinned version's kept file (contract §8). */
  firstFile?: string | null
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
  private readonly firstFile: string
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

  constructor (readonly file: string, options: StoreOptions = {}) {
    super()
    this.log = options.log ?? SILENT
    const loader = new SnapshotLoader({ log: this.log, memory: options.memory ?? null })
    this.budget = options.memory?.budget ?? null
    this.load = options.load ?? (async (file, loadOptions) => await loader.load(file, loadOptions))
    this.settleMs = options.settleMs ?? 0
    this.firstFile = options.firstFile ?? file
  }

  /** The served model; null until the first load has ended. */
  current (): SnapshotModel | null {
    return this.model
  }

  /**
   * Loads the file for the first time, once however often it is called, and resolves with the model served
   * then. Rejects with the SnapshotError of a bad file: a service must not start on one (contract §5).
   */
  async start (): Promise<SnapshotModel> {
    this.first ??= this.loadFirst()
    await this.first
    return this.model as SnapshotModel
  }

  /** Like a reload: a file written to while it was read is read again, never served half. */
  private async loadFirst (): Promise<void> {
    for (;;) {
      const read = await this.readOnce(this.firstFile)
      if (read === 'changed') continue
      if ('error' in read) throw read.error
      this.model = read.model
      return
    }
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

  /** The last RECENT_FAILURES files a reload refused, newest first. */
  recentFailures (): readonly RefusedFile[] {
    return this.refused.map(refusal => ({ ...refusal }))
  }

  /**
   * Loads the file again and serves it if it is valid. Resolves when the newest request for a reload
   * has been carried out, with the outcome of the last run. `file`: another file to load instead (a
   * remote source's download, follow-source.ts); such a load runs on its own, after any other, and
   * resolves with its own outcome, never merged with a reload of the store's file.
   */
  reload (file: string = this.file): Promise<ReloadOutcome> {
    if (file !== this.file) return this.reloadOther(file)
    if (this.running !== null) {
      this.again = true
      return this.running
    }
    const run = async (): Promise<ReloadOutcome> => {
      let outcome: ReloadOutcome
      do {
        this.again = false
        outcome = await this.runOnce(this.file)
      } while (this.again)
      return outcome
    }
    this.running = run().finally(() => { this.running = null })
    return this.running
  }

  /** One reload of `file`, told to listeners. One asked for during the first load runs after it. */
  private async runOnce (file: string): Promise<ReloadOutcome> {
    await this.first?.catch(() => {})
    const outcome = await this.loadOnce(file)
    this.emit('reloaded', outcome)
    return outcome
  }

  private async reloadOther (file: string): Promise<ReloadOutcome> {
    while (this.running !== null) await this.running.catch(() => {})
    this.running = this.runOnce(file).finally(() => {
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
  private async readOnce (file: string): Promise<{ model: SnapshotModel } | { error: unknown } | 'changed'> {
    const before = await fileStamp(file)
    let read: { model: SnapshotModel } | { error: unknown }
    try {
      read = { model: await this.load(file, { serving: this.model !== null }) }
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
    if ('model' in read) read.model.memory.retire()
    return 'changed'
  }

  private async loadOnce (file: string): Promise<ReloadOutcome> {
    const started = Date.now()
    const read = await this.readOnce(file)
    if (read === 'changed') {
      // Loading again here (not waiting for the watcher) also covers SIGHUP reloads.
      this.again = true
      return 'superseded'
    }
    if ('model' in read) {
      const { model } = read
      // Its memory goes once no answer still sends from it (item-memory.ts).
      this.model?.memory.retire()
      this.model = model
      this.counters.succeeded++
      this.counters.failedInARow = 0
      this.counters.staleSince = null
      this.log.info({ snapshot: file, generatedAt: model.info.generatedAt, items: model.itemCounts(), ms: Date.now() - started }, 'snapshot reloaded')
      return 'loaded'
    }
    const { error } = read
    if (isMissing(error)) {
      // The new file's own event brings the next load.
      this.log.warn({ snapshot: file }, 'snapshot file is missing; still serving the last good snapshot')
      return 'missing'
    }
    // The report is shown in /-/status and /-/readyz: an unexpected error's own message stays in the log.
    const problems = error instanceof SnapshotError ? error.problems : ['unexpected error while loading the snapshot (see the service\'s log)']
    const at = new Date()
    const reason: RefusalReason = error instanceof TooBigError ? 'too_big' : 'invalid'
    if (error instanceof TooBigError) this.tooBig = { at, file, ...error.shortfall }
    this.counters.failed++
    this.counters.failedInARow++
    this.byReason[reason]++
    this.refused = [{ at, file, reason, problems }, ...this.refused].slice(0, RECENT_FAILURES)
    this.counters.staleSince ??= at
    this.log.error({ snapshot: file, reason, problems, ...(error instanceof SnapshotError ? {} : { err: error }) }, `snapshot reload failed; ${this.model === null ? 'no snapshot is served yet' : 'still serving the last good snapshot'}\n${error instanceof Error ? error.message : String(error)}`)
    return 'failed'
  }
}

function isMissing (error: unknown): boolean {
  return error instanceof SnapshotError && error.code === 'SNAPSHOT_ERR_UNREADABLE' && error.problems[0] === 'the file does not exist'
}

/** Identifies one version of a file on disk; null when it cannot be read. */
export async function fileStamp (file: string): Promise<string | null> {
  try {
    const s = await stat(file, { bigint: true })
    // A pipe or a device has no versions to tell apart (writing into a pipe changes its times).
    if (!s.isFile()) return 'not a regular file'
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
  } catch {
    return null
  }
}
