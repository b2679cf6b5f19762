// Where a stall of the service's event loop goes: run, or wait for a core. Loaded into the service as plain
// JavaScript: `npx tsx bench/plain-script.ts bench/experiments/gap-recorder.ts` writes
// bench/.data/gap-recorder.mjs, then, from the repository's root, `npm run bench -- --node-args "--import $PWD/bench/.data/gap-recorder.mjs"`
// (not `--import tsx --import …ts`: the parse pool's threads cannot load the .ts, and the service falls back
// to parsing on its main thread, so its loads are not the service's; GAP_LOG names the log, default /tmp/gaps.jsonl). A 1 ms ticker logs every
// gap over 30 ms (GAP_MIN_MS) with what the kernel counted for the main thread over it (/proc/self/task/PID/schedstat):
// `ranMs` on a core, `waitedMs` runnable but queued behind other threads. A gap mostly waited is the
// machine's contention; mostly ran, a long task of ours. GC pauses of the main thread over 10 ms are logged
// too (`gc`), to tell a collection from our own code. `--import` loads it into every thread, parse threads
// included, whose loops are busy parsing for good reason: it records the main thread only, or with
// GAP_THREAD=serving each serving thread of WORKERS > 1 instead (the loops that answer there; `thread` in
// each line). GAP_PROC=0 logs the gaps and GC pauses only, without reading /proc.
// `bench/experiments/gap-profile.ts` reads the log.
import { appendFileSync, readFileSync, readlinkSync } from 'node:fs'
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks'
import { isMainThread, threadId, workerData } from 'node:worker_threads'

const log = process.env.GAP_LOG ?? '/tmp/gaps.jsonl'
const servingThread = !isMainThread && (workerData as { forwardOps?: boolean } | null)?.forwardOps !== undefined
const recorded = process.env.GAP_THREAD === 'serving' ? servingThread : isMainThread
// This thread's own task: /proc/thread-self is `<pid>/task/<tid>`.
const task = isMainThread ? String(process.pid) : readlinkSync('/proc/thread-self').split('/').pop() as string
const file = `/proc/self/task/${task}/schedstat`
const statFile = `/proc/self/task/${task}/stat`
const withProc = process.env.GAP_PROC !== '0'
// The shortest gap logged: 30 ms by default; GAP_MIN_MS=20 for a 20 ms goal (BENCHMARKS.md's change-file stall goal).
const minGapMs = Number(process.env.GAP_MIN_MS ?? 30)
if (!(minGapMs > 0)) throw new TypeError(`GAP_MIN_MS must be a number of milliseconds above 0, got ${JSON.stringify(process.env.GAP_MIN_MS)}`)

/**
 * schedstat: ns on a core, ns waiting for one, timeslices; stat (after the command name): minor faults,
 * user and system time in clock ticks (10 ms), for where the time on a core went.
 */
function read (): number[] {
  if (!withProc) return [0, 0, 0, 0, 0, 0]
  const [ran = 0, waited = 0, slices = 0] = readFileSync(file, 'utf8').split(' ').map(Number)
  const fields = (readFileSync(statFile, 'utf8').split(') ')[1] ?? '').split(' ')
  return [ran, waited, slices, Number(fields[7]), Number(fields[11]), Number(fields[12])]
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb'
}

if (recorded) {
  new PerformanceObserver(list => {
    for (const entry of list.getEntries()) {
      if (entry.duration > 10) {
        // A gc entry's detail (Node ≥ 16) says which collection it was.
        const kind = (entry as PerformanceEntry & { detail?: { kind?: number } | null }).detail?.kind
        appendFileSync(log, JSON.stringify({
          pid: process.pid,
          at: new Date(performance.timeOrigin + entry.startTime).toISOString(),
          gc: kind === undefined ? undefined : GC_KINDS[kind] ?? kind,
          ms: +entry.duration.toFixed(1)
        }) + '\n')
      }
    }
  }).observe({ entryTypes: ['gc'] })

  let last = performance.now()
  let before = read()
  setInterval(() => {
    const now = performance.now()
    const after = read()
    const gapMs = now - last
    if (gapMs > minGapMs) {
      const delta = (i: number): number => (after[i] ?? 0) - (before[i] ?? 0)
      appendFileSync(log, JSON.stringify({
        pid: process.pid,
        thread: threadId,
        at: new Date().toISOString(),
        monoUs: Number(process.hrtime.bigint() / 1000n),
        gapMs: +gapMs.toFixed(1),
        ranMs: +(delta(0) / 1e6).toFixed(1),
        waitedMs: +(delta(1) / 1e6).toFixed(1),
        slices: delta(2),
        minorFaults: delta(3),
        userTicks: delta(4),
        systemTicks: delta(5)
      }) + '\n')
    }
    last = now
    before = after
  }, 1).unref()
}
