// The change-file memory goal ("settled + 3× the change file's size") read settled: the service's RSS with no
// requests, after full collections and V8's memory reducer (a reading is two in a row within 2 MB, taken
// QUIET_SECONDS apart: bench/change-memory.ts), before a change file of the bench's shape (1,000 upserts, 100 deletes)
// and after it is applied; then the next files of the same shape (each the next 1,100 items). The bench's
// change workload reads RSS under load and unsettled, which moves by tens of MB either way.
//   npx tsx bench/experiments/change-settled.ts [CHECKOUT] [SNAPSHOT]
// CHECKOUT: a built checkout (default this one); SNAPSHOT: a JSON Lines file (the change files are made from
// it), default the bench's 1M one. Knobs, from the environment:
//   FILES=n            change files applied one after another (default 6, as the bench); from 3, the rise
//                      per file by least squares is printed: the goal is judged by it (single files scatter)
//   UPSERTS=n DELETES=n  another shape of file (a one-item file shows what any first change costs)
//   QUIET_SECONDS=n    seconds between readings (default 20: V8's memory reducer's wait, change-memory.ts)
//   SERVE_SECONDS=n    pages served under load for n seconds before the first reading (default 0)
//   LATE_SECONDS=a,b   more readings: a seconds after the last file, then b seconds after that
//   NODE_ARGS="…"      node's flags for the service (e.g. --max-semi-space-size=1)
//   SERVICE_ARGS="…"   the service's own flags (e.g. --workers 2), after the experiment's
// The probe (bench/settled-probe.ts) also takes SPACES=1 (V8's spaces, each reading) and SMAPS_OUT=PREFIX (a copy of
// /proc/PID/smaps at each reading, PREFIX-1, PREFIX-2, …), passed through to the service.
import { join, resolve } from 'node:path'
import { CHANGE_DELETES, CHANGE_UPSERTS } from '../change-file.js'
import { changeMemory, type SettledReading } from '../change-memory.js'
import { settledRises } from '../report.js'
import { experimentSnapshot } from '../snapshots.js'

const [checkoutArg, snapshotArg] = process.argv.slice(2)
const checkout = resolve(checkoutArg ?? join(import.meta.dirname, '..', '..'))
const snapshot = experimentSnapshot(snapshotArg)
const MB = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`

/** A whole number from the environment, within bounds (the experiment's knobs). */
function count (name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name]
  const value = text === undefined || text === '' ? fallback : Number(text)
  if (!Number.isInteger(value) || value < min || value > max) throw new TypeError(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(process.env[name])}`)
  return value
}
const upserts = count('UPSERTS', CHANGE_UPSERTS, 0, 100_000)
const result = await changeMemory(checkout, snapshot, {
  files: count('FILES', 6, 1, 99),
  upserts,
  deletes: count('DELETES', CHANGE_DELETES, upserts === 0 ? 1 : 0, 100_000),
  quietSeconds: count('QUIET_SECONDS', 20, 1, 600),
  serveSeconds: count('SERVE_SECONDS', 0, 0, 600),
  lateSeconds: (process.env.LATE_SECONDS ?? '').split(',').filter(text => text !== '').map(text => {
    const seconds = Number(text)
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > 3600) throw new TypeError(`LATE_SECONDS must be whole numbers from 0 to 3600, comma-separated, got ${JSON.stringify(process.env.LATE_SECONDS)}`)
    return seconds
  }),
  nodeArgs: (process.env.NODE_ARGS ?? '').split(' ').filter(arg => arg !== ''),
  serviceArgs: (process.env.SERVICE_ARGS ?? '').split(' ').filter(arg => arg !== ''),
  onProbeLine: line => { console.log(line) },
  log: line => { console.log(line) }
})

let before: SettledReading = result.before
for (const [i, after] of result.after.entries()) {
  const bytes = result.fileBytes[i] as number
  console.log(`change file ${i + 1}, ${MB(bytes)}; settled RSS before ${MB(before.rssBytes)}, after ${MB(after.rssBytes)} ` +
    `(${MB(after.rssBytes - before.rssBytes)} more, ${((after.rssBytes - before.rssBytes) / bytes).toFixed(1)}× the file)`)
  console.log(`  array buffers (the items' chunks and the model's columns): ${MB(before.arrayBuffersBytes)} → ${MB(after.arrayBuffersBytes)}; ` +
    `V8 heap used ${MB(before.heapUsedBytes)} → ${MB(after.heapUsedBytes)}, its pages ${MB(before.heapTotalBytes)} → ${MB(after.heapTotalBytes)}; V8 malloc ${MB(before.v8MallocedBytes)} → ${MB(after.v8MallocedBytes)}, its peak ${MB(before.v8PeakMallocedBytes)} → ${MB(after.v8PeakMallocedBytes)}`)
  console.log(`  resident by mapping: ${Object.entries(after.regions).map(([kind, bytes]) => `${kind} ${MB(before.regions[kind] ?? 0)} → ${MB(bytes)}`).join(', ')}`)
  before = after
}
for (const [i, late] of result.late.entries()) {
  console.log(`${result.late.length > 1 ? `late reading ${i + 1}` : 'late reading'}: settled RSS ${MB(late.rssBytes)} (${MB(late.rssBytes - before.rssBytes)} against the last file's)`)
}
// The goal's reading, as the bench reports it: each file's rise, and from three files the rise per file by
// least squares, which the goal (3× the file) is judged by (docs/decisions/026).
console.log(`settled RSS, each file, then by slope: ${settledRises({ fileBytes: result.fileBytes, beforeBytes: result.before.rssBytes, afterBytes: result.after.map(reading => reading.rssBytes) })}; goal 3×`)
