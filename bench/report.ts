// The benchmark's results: their shape, the targets of issue 4 checked against them, and the markdown
// tables printed at the end and written to bench/results/.
import type { BenchOptions } from './options.js'
import type { LoadResult } from './load-test.js'

export interface WorkloadResult {
  explore: LoadResult
  ceiling: LoadResult
  /** explore req/s ÷ ceiling req/s, pooled over the rounds. */
  ratio: number
  /** The same for each round (service and ceiling measured one after the other). */
  roundRatios: number[]
  /** Body bytes of the service's answers, per request (hot: as replayed; cold: mean of a sample). */
  meanBodyBytes: number
  mix: Record<string, number>
  /** Pairs run, counting those repeated because other processes disturbed them. */
  pairsRun: number
}

/** One process's load: the bare parse or the service, each measured in a process of its own. */
export interface LoadMeasure {
  /** From the spawn to "parsed" (bare) or to the first 200 of GET /-/status (service). */
  readyMs: number
  /** VmHWM when measured. */
  peakRssBytes: number
  /** VmRSS after `settleSeconds` idle: what V8 has given back by itself by then. */
  idleRssBytes: number
  /** VmRSS after a forced full GC: the settled figure; null when the inspector port was taken. */
  gcRssBytes: number | null
}

export interface LoadFigures {
  service: LoadMeasure
  bare: LoadMeasure
  /** The traffic process 5 s after both workloads. */
  exploreAfterTrafficRssBytes: number
  exploreAfterTrafficPeakRssBytes: number
}

/** RSS after the forced GC, or after idling when no GC could be forced. */
export function settledRss (m: LoadMeasure): number {
  return m.gcRssBytes ?? m.idleRssBytes
}

export interface SizeResult {
  label: string
  totalItems: number
  items: Record<string, number>
  companies: number
  file: string
  fileBytes: number
  load: LoadFigures
  hot: WorkloadResult
  cold: WorkloadResult
}

export interface Machine {
  nproc: number
  cpu: string
  node: string
  memoryBytes: number
  kernel: string
}

export interface Target {
  name: string
  goal: string
  measured: string
  pass: boolean
}

export interface BenchResult {
  startedAt: string
  finishedAt: string
  machine: Machine
  /** The checkout whose dist/server.js was measured. */
  service: { dir: string, commit: string, dirtyFiles: number }
  /** Busy cores of the machine over a few seconds before the run: should be about 0. */
  busyCoresBefore: number
  command: string
  options: BenchOptions
  sizes: SizeResult[]
  targets: Target[]
}

// Cores used by other processes above which a run is flagged as disturbed.
export const NOISY_CORES = 0.15

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`
const kb = (bytes: number): string => `${(bytes / 1e3).toFixed(1)} KB`
const ratio = (x: number): string => `${x.toFixed(2)}×`
const int = (x: number): string => Math.round(x).toLocaleString('en-US')
const ms = (x: number): string => x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2)
const seconds = (milliseconds: number): string => `${(milliseconds / 1000).toFixed(2)} s`
const failures = (r: LoadResult): string => `${r.errors}·${r.non2xx}·${r.timeouts}`
const clean = (r: LoadResult): boolean => r.errors === 0 && r.non2xx === 0 && r.timeouts === 0

export function checkTargets (sizes: readonly SizeResult[]): Target[] {
  const targets: Target[] = []
  for (const size of sizes) {
    targets.push({ name: `Hot throughput, ${size.label}`, goal: '≥ 0.90× ceiling', measured: ratio(size.hot.ratio), pass: size.hot.ratio >= 0.9 })
  }
  for (const size of sizes) {
    targets.push({ name: `Cold throughput, ${size.label}`, goal: '≥ 0.60× ceiling', measured: ratio(size.cold.ratio), pass: size.cold.ratio >= 0.6 })
  }
  const runs = sizes.flatMap(s => [s.hot.explore, s.hot.ceiling, s.cold.explore, s.cold.ceiling])
  const dirty = runs.filter(r => !clean(r)).length
  targets.push({
    name: 'Errors, non-2xx, timeouts',
    goal: '0 in every run',
    measured: dirty === 0 ? `0 in all ${runs.length} runs` : `${dirty} of ${runs.length} runs had some`,
    pass: dirty === 0
  })
  const smallest = sizes[0]
  const largest = sizes[sizes.length - 1]
  if (smallest !== undefined && largest !== undefined && largest !== smallest) {
    const drift = largest.cold.ratio / smallest.cold.ratio - 1
    targets.push({
      name: `Cold ratio, ${largest.label} vs ${smallest.label}`,
      goal: 'within 10%',
      measured: `${ratio(largest.cold.ratio)} vs ${ratio(smallest.cold.ratio)} (${drift >= 0 ? '+' : ''}${(drift * 100).toFixed(0)}%)`,
      pass: Math.abs(drift) <= 0.1
    })
  }
  if (largest !== undefined) {
    const { service, bare } = largest.load
    const startup = service.readyMs / bare.readyMs
    targets.push({
      name: `Time to first answer, ${largest.label}`,
      goal: '≤ 1.5× bare read + parse',
      measured: `${ratio(startup)} (${seconds(service.readyMs)} vs ${seconds(bare.readyMs)})`,
      pass: startup <= 1.5
    })
    const resident = settledRss(service) / largest.fileBytes
    targets.push({
      name: `Settled RSS, ${largest.label}`,
      goal: '≤ 1.0× file size',
      measured: `${ratio(resident)} (${mb(settledRss(service))} for ${mb(largest.fileBytes)}${service.gcRssBytes === null ? ', no GC forced' : ''})`,
      pass: resident <= 1.0
    })
  }
  return targets
}

export function markdown (result: BenchResult): string {
  const o = result.options
  const lines: string[] = []
  const m = result.machine
  lines.push(`Run ${result.startedAt} → ${result.finishedAt} · \`${result.command}\``)
  lines.push('')
  lines.push(`Machine: ${m.nproc} cores (${m.cpu}), ${mb(m.memoryBytes)} RAM, Linux ${m.kernel}, Node ${m.node}.`)
  const s = result.service
  lines.push(`Service: \`${s.dir}/dist/server.js\`, ${s.commit}${s.dirtyFiles > 0 ? ` + ${s.dirtyFiles} uncommitted files` : ''}.`)
  lines.push(`Load: autocannon, ${o.connections} connections; per workload a ${o.warmupSeconds} s warm-up of each server, then ${o.rounds} round(s) of ` +
    `${o.durationSeconds} s on the service then ${o.durationSeconds} s on the ceiling (never both at once), pooled. ` +
    'Service: `node dist/server.js --log-level warn --watch false`.')
  lines.push('')
  lines.push('### Throughput: the service against the ceiling')
  lines.push('')
  lines.push('| Snapshot | Workload | Service req/s | Ceiling req/s | Ratio | Service p50 / p99 | Ceiling p50 / p99 | Err·non-2xx·timeouts (service / ceiling) | Mean body | CPU service / ceiling / client | Other load |')
  lines.push('|---|---|--:|--:|--:|--:|--:|:-:|--:|:-:|--:|')
  for (const size of result.sizes) {
    for (const name of ['hot', 'cold'] as const) {
      const w = size[name]
      const spread = w.roundRatios.length > 1 ? ` (${ratio(Math.min(...w.roundRatios))}–${ratio(Math.max(...w.roundRatios))})` : ''
      lines.push(`| ${size.label} | ${name} | ${int(w.explore.requestsPerSecond)} | ${int(w.ceiling.requestsPerSecond)} | **${ratio(w.ratio)}**${spread} | ` +
        `${ms(w.explore.p50Ms)} / ${ms(w.explore.p99Ms)} ms | ${ms(w.ceiling.p50Ms)} / ${ms(w.ceiling.p99Ms)} ms | ` +
        `${failures(w.explore)} / ${failures(w.ceiling)} | ${kb(w.meanBodyBytes)} | ` +
        `${w.explore.serverCores.toFixed(2)} / ${w.ceiling.serverCores.toFixed(2)} / ${w.explore.clientCores.toFixed(2)}–${w.ceiling.clientCores.toFixed(2)} | ` +
        `${Math.max(w.explore.otherCores, w.ceiling.otherCores).toFixed(2)} |`)
    }
  }
  lines.push('')
  lines.push('Ratio: pooled, with the range over rounds in brackets. CPU is in cores during the measured runs (1.00 = one core all the time); the client is the benchmark ' +
    'process running autocannon (service run–ceiling run); other load is every other process on the machine (the larger of the two runs).')
  const noisy = result.sizes.flatMap(s => [s.hot, s.cold]).some(w => Math.max(w.explore.otherCores, w.ceiling.otherCores) > NOISY_CORES)
  if (noisy || result.busyCoresBefore > NOISY_CORES) {
    lines.push('')
    lines.push(`**Warning: other processes were busy** (${result.busyCoresBefore.toFixed(2)} cores before the run; see "Other load"): ` +
      'these figures are not a clean measurement.')
  }
  lines.push('')
  lines.push('### Load: the service against a bare `readFile` + `JSON.parse` in its own process')
  lines.push('')
  lines.push('| Snapshot | File | Items | First answer (service / bare parse) | Ratio | Peak RSS (service / bare) | Ratio | ' +
    'Settled RSS (service / bare) | Ratio | Settled RSS ÷ file | RSS idle, no GC (service / bare) | RSS after traffic |')
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  for (const size of result.sizes) {
    const { service: s, bare: b } = size.load
    const mark = (m: LoadMeasure): string => m.gcRssBytes === null ? '†' : ''
    lines.push(`| ${size.label} | ${mb(size.fileBytes)} | ${int(size.totalItems)} | ${seconds(s.readyMs)} / ${seconds(b.readyMs)} | ` +
      `**${ratio(s.readyMs / b.readyMs)}** | ${mb(s.peakRssBytes)} / ${mb(b.peakRssBytes)} | ` +
      `**${ratio(s.peakRssBytes / b.peakRssBytes)}** | ${mb(settledRss(s))}${mark(s)} / ${mb(settledRss(b))}${mark(b)} | ` +
      `**${ratio(settledRss(s) / settledRss(b))}** | **${ratio(settledRss(s) / size.fileBytes)}** | ` +
      `${mb(s.idleRssBytes)} / ${mb(b.idleRssBytes)} | ${mb(size.load.exploreAfterTrafficRssBytes)} |`)
  }
  lines.push('')
  lines.push('Each figure from a process of its own, started alone on a quiet machine. First answer: from the spawn to the first 200 of ' +
    '`GET /-/status` (service) or to "parsed" (bare). Peak: VmHWM. Settled: VmRSS after a full GC forced from outside ' +
    '(SIGUSR1, then the inspector\'s HeapProfiler.collectGarbage; † where port 9229 was taken: idle figure instead). ' +
    `Idle: VmRSS ${o.settleSeconds} s after load without a forced GC (V8 may give memory back later). ` +
    '"RSS after traffic": the traffic process 5 s after both workloads.')
  lines.push('')
  lines.push('### Targets (issue 4)')
  lines.push('')
  lines.push('| Target | Goal | Measured | |')
  lines.push('|---|---|---|:-:|')
  for (const t of result.targets) lines.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.pass ? '✅ pass' : '❌ fail'} |`)
  lines.push('')
  lines.push('### Workloads')
  lines.push('')
  for (const size of result.sizes) {
    const hot = size.hot.mix
    const cold = size.cold.mix
    const langs = Object.entries(hot).filter(([k]) => k.startsWith('lang:')).map(([k, v]) => `${k.slice(5)} ${v}`).join(', ')
    lines.push(`- ${size.label} (${size.companies} companies): hot ${hot.requests} paths (${hot.distinct} distinct; ${langs}; ` +
      `${hot.unfiltered} unfiltered, ${hot.withLimit} with limit, ${hot.withOffset} with offset); cold ${int(cold.paths ?? 0)} distinct pages ` +
      `(+${int(cold.warmupPaths ?? 0)} for the warm-up) over ${int(cold.pairs ?? 0)} (language, company) lists, limit ${cold.limitMin}–${cold.limitMax}, ` +
      `deepest offset ${int(cold.deepestOffset ?? 0)}.`)
  }
  return lines.join('\n') + '\n'
}
