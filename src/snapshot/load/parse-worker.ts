// A parse thread of parse-threads.ts: checks and renders the batches it is sent (parse-batch.ts) and moves
// the results back, in the order the batches came.
import { parentPort } from 'node:worker_threads'
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { movedBuffers, parseBatch, type BatchTask } from './parse-batch.js'
import { ItemBytes } from '../model/item-bytes.js'
import { READY, SCRATCH_BYTES } from './parse-threads.js'

// Below the loading thread, which serves requests while a reload parses: on Linux a thread's priority is
// its own, set through its thread id. Best effort; elsewhere, or refused, the thread runs as it is.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
  if (Number.isSafeInteger(tid)) setPriority(tid, 10)
} catch {}

// One for every batch: a buffer made and freed per batch raises the C allocator's threshold for giving
// large blocks their own mappings, after which the model's chunks share heaps with freed memory that stays
// resident (60 MB more settled RSS at 1M items, measured with a fixed threshold for comparison).
const scratch = new ItemBytes(SCRATCH_BYTES)

parentPort?.on('message', (task: BatchTask) => {
  const batch = parseBatch(task, scratch)
  parentPort?.postMessage(batch, movedBuffers(batch))
})

parentPort?.postMessage(READY)
