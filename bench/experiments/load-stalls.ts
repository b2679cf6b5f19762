// Where a large load holds the main thread: loads a snapshot file with the service's loader while a
// ticker measures every gap between turns of the event loop, and times the model build (synchronous) on
// its own (its wall time: it yields to the event loop). `npx tsx bench/experiments/load-stalls.ts FILE`
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { SnapshotModelBuilder } from '../../src/snapshot/model/build-model.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'

const file = process.argv[2]
if (file === undefined) throw new Error('usage: load-stalls.ts FILE')

// The build (sort and index) runs in slices; its wall time, turns of the event loop included.
const build = SnapshotModelBuilder.prototype.buildInSlices
let buildMs = 0
SnapshotModelBuilder.prototype.buildInSlices = async function (this: SnapshotModelBuilder, ...args: Parameters<typeof build>) {
  const started = performance.now()
  try {
    return await build.apply(this, args)
  } finally {
    buildMs = performance.now() - started
  }
}

const histogram = monitorEventLoopDelay({ resolution: 5 })
histogram.enable()
const gaps: number[] = []
let last = performance.now()
let running = true
const tick = () => {
  const now = performance.now()
  gaps.push(now - last)
  last = now
  if (running) setImmediate(tick)
}
setImmediate(tick)
const started = performance.now()
const model = await loadSnapshotFile(file)
// The last gap ends at the ticker's next turn, after the load's own continuation.
await new Promise(resolve => setImmediate(resolve))
running = false
histogram.disable()
const total = performance.now() - started
gaps.sort((a, b) => b - a)
console.log(JSON.stringify({
  file,
  items: model.itemCounts(),
  loadMs: Math.round(total),
  buildMs: Math.round(buildMs),
  longestGapsMs: gaps.slice(0, 5).map(gap => Math.round(gap)),
  gapsOver50ms: gaps.filter(gap => gap > 50).length,
  eventLoopDelayMaxMs: Math.round(histogram.max / 1e6),
  rssMb: Math.round(process.memoryUsage().rss / 1e6)
}, null, 1))
