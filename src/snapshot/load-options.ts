// What both snapshot formats' loaders take, how long they work between turns of the event loop, and how
// they name a file they cannot read.

/** Work between two turns of the event loop while a snapshot loads: a reloading service keeps answering. */
export const SLICE_MS = 8

export interface LoadOptions {
  /** At most this many problems are listed for a bad file. */
  problemCap?: number
  /** Overrides the clock, for tests. */
  now?: () => Date
  /** Parse the document whole, skipping the item-by-item path (tests compare the two). */
  whole?: boolean
  /**
   * Files of at least this many bytes have the second half of their items added by a worker thread
   * (default PARALLEL_BYTES; Infinity: never). Only `loadSnapshotBytes` and `loadSnapshotFile` use one.
   */
  parallelBytes?: number
  /** Bytes read at a time from a JSON Lines file (tests make it small to cut lines and characters). */
  readChunk?: number
}

/** An editor-facing reason a file could not be read. */
export function describeReadError (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  switch (code) {
    case 'ENOENT': return 'the file does not exist'
    case 'EACCES':
    case 'EPERM': return 'permission denied'
    case 'EISDIR': return 'the path is a directory, not a file'
    default: return `the file could not be read (${code ?? String(error)})`
  }
}
