// What dropping a large model's memory costs the main thread: 450 × 4 MiB buffers (a 1.8 GB snapshot's
// items), touched, then dropped while the process makes ordinary garbage; prints the longest gap between
// turns of the event loop. `node --trace-gc bench/experiments/free-buffers.mjs [--shared]`
// --shared: the buffers are SharedArrayBuffers (as the parse threads render them), which V8 does not count
// as external memory: dropped, they are followed by the hint item-memory.ts gives (an ArrayBuffer of
// 128 MiB made and dropped), and freed by whichever collection finds them.
import { monitorEventLoopDelay } from 'node:perf_hooks'

const shared = process.argv.includes('--shared')
const CHUNK = 4 * 1024 * 1024
let chunks = []
for (let i = 0; i < 450; i++) chunks.push((shared ? Buffer.from(new SharedArrayBuffer(CHUNK)) : Buffer.allocUnsafeSlow(CHUNK)).fill(i & 255))
const delay = monitorEventLoopDelay({ resolution: 1 })
delay.enable()
let last = performance.now()
let worst = 0
let ticking = true
const tick = () => {
  const now = performance.now()
  worst = Math.max(worst, now - last)
  last = now
  if (ticking) setImmediate(tick)
}
setImmediate(tick)
await new Promise(resolve => setTimeout(resolve, 200))
worst = 0
chunks = null
// eslint-disable-next-line no-new -- made only to be counted and dropped
if (shared) new ArrayBuffer(128 * 1024 * 1024)
// Ordinary garbage, so that the GC runs as it would in a serving process.
const junk = []
for (let i = 0; i < 2e6; i++) {
  junk.push({ i })
  if (junk.length > 1e5) junk.length = 0
  if ((i & 0xffff) === 0) await new Promise(resolve => setImmediate(resolve))
}
await new Promise(resolve => setTimeout(resolve, 2000))
ticking = false
console.log(`longest gap after dropping 1.8 GB of ${shared ? 'shared ' : ''}buffers: ${worst.toFixed(1)} ms; event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms; RSS now ${Math.round(process.memoryUsage().rss / 1e6)} MB`)
