// A parse thread of the pool, living as long as it so its checks and serializer compile once (ADR 022).
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { workerData } from 'node:worker_threads'
import { move, transferableSymbol, valueSymbol } from 'piscina'
import { parseBatch, type BatchTask, type ParsedBatch } from './parse-batch.js'
import { ItemBytes } from '../model/item-bytes.js'
import { collectNow } from '../model/item-memory.js'
import { setMemoryPolicy } from '../memory-policy.js'
import { SCRATCH_BYTES, type ParseWorkerData } from './parse-pool.js'

const { policy } = workerData as ParseWorkerData
setMemoryPolicy(policy)

// Below the loading thread, which answers requests; Linux sets it per thread id. Best effort (ADR 009).
if (policy.lowPriorityParseThreads) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isSafeInteger(tid)) setPriority(tid, 10)
  } catch {}
}

// One for every batch, unless the policy says otherwise (ADR 010).
const scratch = new ItemBytes(SCRATCH_BYTES)

export default function parse (task: BatchTask): unknown {
  const batch = parseBatch(task, policy.reusedBatchMemory ? scratch : new ItemBytes(SCRATCH_BYTES))
  return move(movable(batch))
}

/** Else the heap keeps what the load left while idle (ADR 022). */
export function rest (): void {
  if (policy.restingParseThreads) collectNow()
}

export function ready (): boolean {
  return true
}

/** The input buffer transferred back rather than copied. */
function movable (batch: ParsedBatch): Parameters<typeof move>[0] {
  return {
    [transferableSymbol]: [batch.read.buffer],
    [valueSymbol]: batch
  }
}
