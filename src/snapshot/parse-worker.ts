// A parse thread of parse-threads.ts: checks and renders the batches of lines it is sent (parse-lines.ts)
// and moves the results back, in the order the batches came.
import { parentPort } from 'node:worker_threads'
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { movedBuffers, parseLines } from './parse-lines.js'

export interface LinesTask {
  bytes: Uint8Array
  first: boolean
}

// Below the loading thread, which serves requests while a reload parses: on Linux a thread's priority is
// its own, set through its thread id. Best effort; elsewhere, or refused, the thread runs as it is.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
  if (Number.isSafeInteger(tid)) setPriority(tid, 10)
} catch {}

parentPort?.on('message', (task: LinesTask) => {
  const batch = parseLines(task.bytes, task.first)
  parentPort?.postMessage(batch, movedBuffers(batch))
})
