// The worker thread of item-memory.ts: frees the buffers it is given, a few at a time.
//
// Freed all at once, a gigabyte of pages held the kernel long enough to stall the main thread too
// (bench/experiments/free-buffers.mjs: 126 ms, with the free on this thread); 32 MiB at a time, with a
// collection after each, no gap of the main thread's event loop grew. Buffers are freed only by a
// collection, and an idle thread would not run one: hence `gc`, taken from a context made after the flag
// (V8's flags are the process's, but only contexts made later get `gc`; the service makes no other).
import { parentPort } from 'node:worker_threads'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const BATCH_BYTES = 32 * 1024 * 1024

setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

const queue: ArrayBuffer[] = []
let running = false

function step (): void {
  let bytes = 0
  let count = 0
  for (; queue.length > 0 && bytes < BATCH_BYTES; count++) bytes += (queue.shift() as ArrayBuffer).byteLength
  // After this task, so that nothing on the stack still holds the batch.
  setImmediate(() => {
    collect()
    parentPort?.postMessage(count)
    if (queue.length > 0) setTimeout(step, 1)
    else running = false
  })
}

parentPort?.on('message', (buffers: ArrayBuffer[]) => {
  queue.push(...buffers)
  if (running) return
  running = true
  step()
})
