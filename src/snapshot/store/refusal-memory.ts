// The one rule for what a refusal leaves behind, for the store's files and the followers' objects alike (ADR 045):
// what is remembered, by which key, and until when. Remembered, the same bytes are neither read nor downloaded again.
import { ManifestError, SnapshotError, TooBigError } from '../../errors.js'

/** The content at fault, the memory budget, or anything else (a missing or unreadable file, a fault of ours). */
export type RefusalCause = 'content' | 'memory' | 'other'

export function causeOf (error: unknown): RefusalCause {
  if (error instanceof TooBigError) return 'memory'
  if (error instanceof ManifestError) return 'content'
  return error instanceof SnapshotError && error.code === 'SNAPSHOT_ERR_INVALID' ? 'content' : 'other'
}

/**
 * Whether the same bytes would be refused again, so that trying them costs for nothing. The content at fault:
 * always. Too big: for an object, whose bytes are downloaded before the budget can say (a file is weighed against
 * the memory free then, at no cost, and memory may have been let go since). Anything else is tried again: a file
 * may be mended without a new stamp.
 */
export function remembered (cause: RefusalCause, where: 'file' | 'object'): boolean {
  return cause === 'content' || (cause === 'memory' && where === 'object')
}

/**
 * The last refusal, remembered by what names its bytes before they are read: a file's stamp, an object's validators.
 * Forgotten when another is refused, and when a state is served: the same bytes are then a new refusal.
 */
export class RefusalMemory<T> {
  private last: { key: string, held: T } | null = null

  constructor (private readonly where: 'file' | 'object') {}

  /** `key` null: nothing names the bytes, so nothing can be remembered. */
  remember (key: string | null, cause: RefusalCause, held: T): void {
    this.last = key !== null && remembered(cause, this.where) ? { key, held } : null
  }

  recall (key: string | null): T | null {
    return key !== null && this.last?.key === key ? this.last.held : null
  }

  /** What the last refusal left, whatever its key. */
  get latest (): T | null {
    return this.last?.held ?? null
  }

  forget (): void {
    this.last = null
  }
}
