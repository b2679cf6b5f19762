// A format's framing as the pipeline sees it, apart so the framings and the loader do not import each other.
import type { BatchMemory } from './batch-memory.js'
import type { BatchMerge, MergeQueue, MergeTarget } from './merge-batches.js'
import type { BatchParser } from './parse-pool.js'
import type { FileChunks } from './read-chunks.js'

export interface Framing {
  /** False at the end, or once it cannot go on. */
  read: () => Promise<boolean>
  end: () => void
  /** Once everything is merged. */
  finish: () => void
  readonly generatedAt: string | null
}

export interface FramingParts {
  file: string
  chunks: FileChunks
  parser: BatchParser
  queue: MergeQueue
  merge: BatchMerge
  builder: MergeTarget

  memory: BatchMemory
  batchBytes: number
}
