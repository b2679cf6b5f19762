// A thread that stops working collects once, giving its young generation back (ADR 036).
import { performance } from 'node:perf_hooks'
import { collectNow } from '../snapshot/model/item-memory.js'

/** Event-loop utilization over one period: busy at or above, idle below. */
const BUSY = 0.2
const IDLE = 0.02

/** Returns its stop. `worked`: the thread has just worked (a load): its first idle period collects. */
export function collectWhenIdle (
  { everyMs = 1_000, collect = () => { collectNow(true) }, worked: workedBefore = false } = {}
): () => void {
  let last = performance.eventLoopUtilization()
  let worked = workedBefore
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization()
    const { utilization } = performance.eventLoopUtilization(now, last)
    last = now
    if (utilization >= BUSY) {
      worked = true
    } else if (worked && utilization < IDLE) {
      worked = false
      collect()
      // Its own pause is not work.
      last = performance.eventLoopUtilization()
    }
  }, everyMs).unref()
  return () => { clearInterval(timer) }
}
