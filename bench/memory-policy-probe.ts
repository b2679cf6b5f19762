// One probe of bench/memory-policy.ts, in a process of its own: loads a snapshot with the built service's
// loader (dist/), every memory trick on or one turned off, then reloads it twice as a serving replica would
// (the served model retired at each swap), and prints what it cost as one JSON line.
//   node --expose-gc --import tsx bench/memory-policy-probe.ts SNAPSHOT [TRICK]
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

interface Model { memory: { retire: () => void } }
interface Loader { loadSnapshotFile: (file: string, options?: { serving?: boolean }) => Promise<Model> }
interface Policy { setMemoryPolicy: (changes: Record<string, boolean>) => void, MEMORY_TRICKS: readonly string[] }

export interface ProbeResult {
  /** The trick turned off, or null for all on. */
  off: string | null
  firstLoadMs: number
  reloadMs: number[]
  /** Major collections and their pauses while the two reloads ran. */
  reloadMajorGcs: number
  reloadGcPauseMs: number
  /** The longest event-loop delay while the reloads ran (no requests: the loader's own slices). */
  reloadLoopMaxMs: number
  peakRssBytes: number
  settledRssBytes: number
}

const [file, off] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: node --expose-gc --import tsx bench/memory-policy-probe.ts SNAPSHOT [TRICK]')
  process.exit(2)
}
const dist = resolve('dist', 'snapshot')
const policy = await import(pathToFileURL(resolve(dist, 'memory-policy.js')).href) as Policy
if (off !== undefined) {
  if (!policy.MEMORY_TRICKS.includes(off)) {
    console.error(`no trick ${off}: ${policy.MEMORY_TRICKS.join(', ')}`)
    process.exit(2)
  }
  policy.setMemoryPolicy({ [off]: false })
}
const { loadSnapshotFile } = await import(pathToFileURL(resolve(dist, 'load', 'load-snapshot.js')).href) as Loader

let peak = 0
const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 20)
let counting = false
let majors = 0
let pauses = 0
new PerformanceObserver(list => {
  if (!counting) return
  for (const entry of list.getEntries()) {
    pauses += entry.duration
    if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++
  }
}).observe({ entryTypes: ['gc'] })

let started = performance.now()
let model = await loadSnapshotFile(file)
const firstLoadMs = performance.now() - started
const delay = monitorEventLoopDelay({ resolution: 5 })
const reloadMs: number[] = []
counting = true
delay.enable()
for (let round = 0; round < 2; round++) {
  started = performance.now()
  const next = await loadSnapshotFile(file, { serving: true })
  reloadMs.push(performance.now() - started)
  model.memory.retire()
  model = next
}
delay.disable()
counting = false
// Settled: what stays once the collector has had its chances, as the bench's settled RSS is taken.
const gc = (globalThis as { gc?: () => void }).gc
for (let i = 0; i < 5; i++) {
  gc?.()
  await sleep(500)
}
clearInterval(sampler)
const result: ProbeResult = {
  off: off ?? null,
  firstLoadMs,
  reloadMs,
  reloadMajorGcs: majors,
  reloadGcPauseMs: pauses,
  reloadLoopMaxMs: delay.max / 1e6,
  peakRssBytes: peak,
  settledRssBytes: process.memoryUsage.rss()
}
console.log(JSON.stringify(result))
// The model is held to the end on purpose (the settled RSS is of a served model); idle pool threads do not
// hold the process.
model.memory.retire()
