// What the store remembers of its reloads: the counts /-/status and the metrics show, the recent refusals, and the
// refused file that is neither read nor reported again while its stamp is unchanged (refusal-memory.ts).
import { SnapshotError, TooBigError, type MemoryShortfall } from '../../errors.js'
import { causeOf, RefusalMemory, type RefusalCause } from './refusal-memory.js'
import type { StoreLogger } from './store-logger.js'

export interface ReloadFailure {
  at: Date
  problems: readonly string[]
  /** Which the followers' memory of the object refused goes by. */
  cause: RefusalCause
}

type RefusalReason = 'invalid' | 'too_big'

interface RefusedFile extends ReloadFailure {
  file: string
  reason: RefusalReason
}

interface TooBigRefusal extends MemoryShortfall {
  at: Date
  file: string
}

export interface ReloadStatus {
  succeeded: number
  failed: number
  /** Hollow's "refreshes failed in a row". */
  failedInARow: number
  lastFailure: ReloadFailure | null
  staleSince: Date | null
}

interface ChangeFileCounts {
  applied: number
  refused: number
}

const RECENT_FAILURES = 10

export class ReloadRecord {
  private readonly counters: Omit<ReloadStatus, 'lastFailure'> =
    { succeeded: 0, failed: 0, failedInARow: 0, staleSince: null }

  /** Sums to `failed`. */
  private readonly byReason: Record<RefusalReason, number> = { invalid: 0, too_big: 0 }
  private tooBig: TooBigRefusal | null = null
  /** Newest first. */
  private refused: RefusedFile[] = []
  /** Unchanged, it is not read or reported again. */
  private readonly refusedAsIs = new RefusalMemory<{ error: unknown, reported: boolean }>('file')
  private readonly changeCounts: ChangeFileCounts = { applied: 0, refused: 0 }

  constructor (private readonly log: StoreLogger) {}

  status (): ReloadStatus {
    const newest = this.refused[0]
    return {
      ...this.counters,
      lastFailure: newest === undefined ? null : { at: newest.at, problems: newest.problems, cause: newest.cause }
    }
  }

  refusals (): Record<RefusalReason, number> {
    return { ...this.byReason }
  }

  lastTooBig (): TooBigRefusal | null {
    return this.tooBig === null ? null : { ...this.tooBig }
  }

  recentFailures (): readonly RefusedFile[] {
    return this.refused.map(refusal => ({ ...refusal }))
  }

  changeFiles (): ChangeFileCounts {
    return { ...this.changeCounts }
  }

  /** A watcher may hear one save twice: the same bytes would be one refusal listed twice. */
  refusedBefore (file: string, stamp: string | null): unknown {
    return this.refusedAsIs.recall(fileKey(file, stamp))?.error ?? null
  }

  /** A read that failed with the file unchanged meanwhile. */
  readFailed (file: string, stamp: string | null, error: unknown): void {
    this.refusedAsIs.remember(fileKey(file, stamp), causeOf(error), { error, reported: false })
  }

  applied (): void {
    this.changeCounts.applied++
  }

  /** A state served after failures: failing no longer. */
  get failing (): boolean {
    return this.counters.failedInARow > 0
  }

  succeeded (): void {
    this.counters.succeeded++
    this.counters.failedInARow = 0
    this.counters.staleSince = null
    // After a success the same bad file is a new failure again.
    this.refusedAsIs.forget()
  }

  /** `serving`: a state is served, which the log says stays. */
  refuse (file: string, error: unknown, what: 'snapshot' | 'change file', serving: boolean): 'missing' | 'failed' {
    const key = what === 'snapshot' ? 'snapshot' : 'changes'
    if (isMissing(error)) {
      // The new file's own event brings the next load.
      this.log.warn(
        { [key]: file }, `${what === 'snapshot' ? 'snapshot file' : what} is missing; still serving the last good state`
      )
      return 'missing'
    }
    const asIs = this.refusedAsIs.latest
    if (asIs !== null && error === asIs.error) {
      if (asIs.reported) {
        this.log.info({ [key]: file }, `${what} unchanged since it was refused`)
        return 'failed'
      }
      asIs.reported = true
    }
    // Public via /-/status: an unexpected error's own message stays in the log.
    const problems = error instanceof SnapshotError
      ? error.problems
      : [`unexpected error while loading the ${what} (see the service's log)`]
    if (what === 'change file') this.changeCounts.refused++
    const at = new Date()
    const reason: RefusalReason = error instanceof TooBigError ? 'too_big' : 'invalid'
    if (error instanceof TooBigError) this.tooBig = { at, file, ...error.shortfall }
    this.counters.failed++
    this.counters.failedInARow++
    this.byReason[reason]++
    this.refused = [{ at, file, reason, problems, cause: causeOf(error) }, ...this.refused].slice(0, RECENT_FAILURES)
    this.counters.staleSince ??= at
    this.log.error({
      [key]: file,
      reason,
      problems,
      ...(error instanceof SnapshotError ? {} : { err: error })
    }, `${what} reload failed; ${serving ? 'still serving the last good snapshot' : 'no snapshot is served yet'}\n${error instanceof Error ? error.message : String(error)}`)
    return 'failed'
  }
}

function fileKey (file: string, stamp: string | null): string | null {
  return stamp === null ? null : `${file}\n${stamp}`
}

export function isMissing (error: unknown): boolean {
  return error instanceof SnapshotError && error.code === 'SNAPSHOT_ERR_UNREADABLE' &&
    error.problems[0] === 'the file does not exist'
}
