// What dropping a large model's memory costs the main thread: 450 × 4 MiB buffers (a 1.8 GB snapshot's
// items), touched, then dropped while the process makes ordinary garbage; prints the longest gap between
// turns of the event loop. `node --trace-gc --import tsx bench/experiments/free-buffers.ts [--shared] [--keep]`
// --keep: the buffers are held, not dropped: the same garbage without the drop (the control).
// --shared: the buffers are SharedArrayBuffers (as every chunk is, ADR 011), which V8 does not count as
// external memory: dropped, they are followed by the hint item-memory.ts gives (an ArrayBuffer of
// 128 MiB made and dropped, ADR 012), and freed by whichever collection finds them.
// Open question (BENCHMARKS.md, known limits): the shared drop stalls here, the service's does not.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises'

const shared = process.argv.includes('--shared')
const keep = process.argv.includes('--keep')
const CHUNK = 4 * 1024 * 1024
let chunks: Buffer[] | null = []
for (let i = 0; i < 450; i++) chunks.push((shared ? Buffer.from(new SharedArrayBuffer(CHUNK)) : Buffer.allocUnsafeSlow(CHUNK)).fill(i & 255))
const delay = monitorEventLoopDelay({ resolution: 1 })
delay.enable()
let last = performance.now()
let worst = 0
let ticking = true
const tick = (): void => {
  const now = performance.now()
  worst = Math.max(worst, now - last)
  last = now
  if (ticking) setImmediate(tick)
}
setImmediate(tick)
await sleep(200)
worst = 0
if (!keep) chunks = null
// eslint-disable-next-line no-new -- made only to be counted and dropped: V8 counts an ArrayBuffer, and so starts a collection
if (shared && !keep) new ArrayBuffer(128 * 1024 * 1024)
// Ordinary garbage, so that the GC runs as it would in a serving process.
const junk: Array<{ i: number }> = []
for (let i = 0; i < 2e6; i++) {
  junk.push({ i })
  if (junk.length > 1e5) junk.length = 0
  if ((i & 0xffff) === 0) await turn()
}
await sleep(2000)
ticking = false
console.log(`longest gap after ${keep ? 'keeping' : 'dropping'} 1.8 GB of ${shared ? 'shared ' : ''}buffers (${chunks?.length ?? 0} held): ${worst.toFixed(1)} ms; ` +
  `event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms; RSS now ${Math.round(process.memoryUsage().rss / 1e6)} MB`)
