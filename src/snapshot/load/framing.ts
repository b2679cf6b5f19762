// What a format's framing is to the load pipeline, apart so that the framings and the loader do not import each other.
import type { BatchMemory } from './batch-memory.js'
import type { BatchMerge, MergeQueue, MergeTarget } from './merge-batches.js'
import type { BatchParser } from './parse-pool.js'
import type { FileChunks } from './read-chunks.js'

/** A format's part of the pipeline: the file's bytes into batches, queued for the merge in file order. */
export interface Framing {
  /** Reads the next part of the file and queues what it completes; false at its end, or once it cannot go on. */
  read: () => Promise<boolean>
  /** After the last read: what the end of the file completes (the last line; the document's end). */
  end: () => void
  /** Once everything is merged: the format's checks of the whole file. */
  finish: () => void
  /** The snapshot's `generated_at`, once merged. */
  readonly generatedAt: string | null
}

/** What a framing works with: the file, the parser its batches go to, and the merge they come back to. */
export interface FramingParts {
  file: string
  chunks: FileChunks
  parser: BatchParser
  queue: MergeQueue
  merge: BatchMerge
  builder: MergeTarget

  /** Where batches are read or gathered into, reused. */
  memory: BatchMemory
  batchBytes: number
}
