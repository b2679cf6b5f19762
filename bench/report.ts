// The benchmark's results: their shape, the targets of BENCHMARKS.md's first goals checked against them, and the markdown
// tables printed at the end and written to bench/results/.
import type { BenchOptions } from './options.js'
import type { LoadResult } from './load-test.js'
import type { SnapshotFormat } from './snapshots.js'
import { policyTable, type PolicyResult } from './memory-policy.js'

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
  /** Rounds run (one run of each server), counting those repeated because other processes disturbed them. */
  pairsRun: number
  /** With a baseline: its figures, and service req/s ÷ baseline req/s, pooled and for each round. */
  baseline?: { result: LoadResult, ratio: number, roundRatios: number[] }
}

/** One process's load: the bare parse or the service, each measured in a process of its own. */
export interface LoadMeasure {
  /** From the spawn to "parsed" (bare) or to the first 200 of GET /-/readyz (service: a snapshot is served). */
  readyMs: number
  /** VmHWM when measured. */
  peakRssBytes: number
  /** VmRSS after `settleSeconds` idle: what V8 has given back by itself by then. */
  idleRssBytes: number
  /** VmRSS after a forced full GC: the settled figure; null when the inspector port was taken. */
  gcRssBytes: number | null
}

/** A start after a start, with its STATE_DIR: from the version image the first wrote, where there is one. */
export interface RestartMeasure {
  load: LoadMeasure
  /** The image's size, and the time to read its bytes alone into one buffer; null: no image was written. */
  imageBytes: number | null
  imageReadMs: number | null
}

export interface LoadFigures {
  service: LoadMeasure
  serviceRestart?: RestartMeasure | undefined
  bare: LoadMeasure
  /** The traffic process 5 s after both workloads. */
  exploreAfterTrafficRssBytes: number
  exploreAfterTrafficPeakRssBytes: number
  /** With a baseline: its load, measured as the service's, and its traffic process after both workloads. */
  baseline?: { load: LoadMeasure, restart?: RestartMeasure | undefined, afterTrafficRssBytes: number, afterTrafficPeakRssBytes: number }
}

/** RSS after the forced GC, or after idling when no GC could be forced. */
export function settledRss (m: LoadMeasure): number {
  return m.gcRssBytes ?? m.idleRssBytes
}

/** The largest of the known values; null when none is known. */
const maxOf = (values: ReadonlyArray<number | null>): number | null => {
  const known = values.filter((x): x is number => x !== null)
  return known.length === 0 ? null : Math.max(...known)
}

/** The headline figures of one size (SizeFigures). */
export function sizeFigures (size: Omit<SizeResult, 'figures'>): SizeFigures {
  const { service, bare, baseline } = size.load
  const reloads = (size.reloads ?? []).filter(r => r.contender !== 'baseline')
  const baselineReloads = (size.reloads ?? []).filter(r => r.contender === 'baseline')
  const figures: SizeFigures = {
    firstAnswerVsBare: service.readyMs / bare.readyMs,
    settledRssBytes: settledRss(service),
    settledRssVsFile: settledRss(service) / size.fileBytes,
    reloadStallMaxMs: maxOf(reloads.map(r => r.lagMaxMs)),
    // A reload never counted has no time: the longest is then unknown, not the longest of the others.
    reloadMsMax: reloads.some(r => r.reloadMs === null) ? null : maxOf(reloads.map(r => r.reloadMs)),
    reloadPeakRssBytes: maxOf(reloads.map(r => r.peakRssBytes))
  }
  const hot = size.hot.baseline
  const cold = size.cold.baseline
  if (baseline !== undefined && hot !== undefined && cold !== undefined) {
    figures.versusBaseline = {
      hot: hot.ratio,
      cold: cold.ratio,
      firstAnswer: service.readyMs / baseline.load.readyMs,
      peakRss: service.peakRssBytes / baseline.load.peakRssBytes,
      settledRss: settledRss(service) / settledRss(baseline.load)
    }
  }
  if (baselineReloads.length > 0) {
    figures.baselineReload = {
      stallMaxMs: maxOf(baselineReloads.map(r => r.lagMaxMs)),
      msMax: baselineReloads.some(r => r.reloadMs === null) ? null : maxOf(baselineReloads.map(r => r.reloadMs))
    }
  }
  return figures
}

/** Whether the work ended after the window's load did: its end was not under load. */
export function outlastedWindow (reloadMs: number, windowSeconds: number, reloadAtSeconds: number): boolean {
  return reloadMs > (windowSeconds - reloadAtSeconds) * 1000
}

/** The reload workload: a fresh service under hot load while its snapshot is renamed over. */
export interface ReloadResult {
  /** Whose reload: the service's unless --reload-baseline (absent in results written before it). */
  contender?: 'service' | 'baseline'
  windowSeconds: number
  reloadAtSeconds: number
  /** autocannon over the whole window. */
  load: LoadResult
  /** From the rename to /-/status counting the reload (the watcher's debounce included); null: never counted. */
  reloadMs: number | null
  /** prom-client's event-loop lag max from the rename to the end of the window (or of the reload). */
  lagMaxMs: number | null
  /**
   * Its p99: from the rename to the end of the window in results written before `lagMaxUntilCountedMs`, from
   * the count to the end of the window since (a p99 of two spans cannot be put together from theirs); null
   * when the work outlasted the window.
   */
  lagP99Ms: number | null
  /**
   * The lag max from the rename until /-/status counted the work (the stall while it ran, not the rest of the
   * window after it), and over the seconds of the same load before the rename (what the load alone stalls):
   * absent in results written before they were measured.
   */
  lagMaxUntilCountedMs?: number | null
  lagMaxBeforeMs?: number | null
  /** VmRSS just before the window. */
  rssBeforeBytes: number
  /** VmHWM after the window and the reload: reset before the window, or since start when that failed. */
  peakRssBytes: number
  peakFromWindow: boolean
  rssAfterBytes: number
}

/** The change workload: a change file applied to a served JSON Lines snapshot under load (BENCHMARKS.md's change-file goals). */
export interface ChangesResult extends Omit<ReloadResult, 'contender'> {
  /**
   * The work as the service timed it (its "change file applied" log line): from the watcher's debounce to
   * the new version served. Absent in results written before it was read.
   */
  appliedMs?: number | null
  changeBytes: number
  upserts: number
  deletes: number
  /** The load's connections: the bench's --connections, or the steady load's 4. Absent in results written before the steady load (the bench's then). */
  connections?: number
  /**
   * The memory goal's reading (change-memory.ts): settled RSS of a service with no requests before a change
   * file of this shape, after it (the first after a start) and after each next file of the next items (one
   * in earlier runs, then two, five now). Absent in results written before it was read, and in --quick runs.
   */
  settled?: { fileBytes: number[], beforeBytes: number, afterBytes: number[] }
}

/**
 * A change file's settled RSS rises, file by file, and from three files on the rise per file by least
 * squares, which the goal is judged by (single files scatter with the allocators' steps: docs/decisions/026):
 * `+2.1 MB (+1.5×), −0.2 MB (−0.1×), +1.4 MB (+1.0×); by slope +1.1 MB a file (+0.8×)`.
 */
export function settledRises (settled: NonNullable<ChangesResult['settled']>): string {
  const signed = (value: number, digits: number): string => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(digits)}`
  let before = settled.beforeBytes
  const rises = settled.afterBytes.map((after, i) => {
    const rise = after - before
    before = after
    return `${signed(rise / 1e6, 1)} MB (${signed(rise / (settled.fileBytes[i] ?? NaN), 1)}×)`
  }).join(', ')
  if (settled.afterBytes.length < 3) return rises
  const perFile = slope(settled.afterBytes)
  const meanFile = settled.fileBytes.reduce((sum, bytes) => sum + bytes, 0) / settled.fileBytes.length
  return `${rises}; by slope ${signed(perFile / 1e6, 1)} MB a file (${signed(perFile / meanFile, 1)}×)`
}

/** Least squares: the rise of `values` per step. */
export function slope (values: readonly number[]): number {
  const n = values.length
  const meanX = (n - 1) / 2
  const meanY = values.reduce((sum, y) => sum + y, 0) / n
  let sxy = 0
  let sxx = 0
  for (const [x, y] of values.entries()) {
    sxy += (x - meanX) * (y - meanY)
    sxx += (x - meanX) ** 2
  }
  return sxy / sxx
}

/**
 * The fleet workload (`--fleet`, BENCHMARKS.md's fleet goal): two replicas behind nginx follow a manifest in moto's S3; a
 * change file published.
 */
export interface FleetResult {
  /** Per replica, from its spawn to its first 200 of /-/readyz: a join from the manifest's image (ADR 042). */
  joinMs?: number[]
  /** Per replica joined from the image, from its spawn to its log saying the snapshot is downloaded and kept. */
  keptMs?: Array<number | null>
  /** The replicas' SNAPSHOT_POLL_SECONDS: the goal is each serving the change within it + 1 s. */
  pollSeconds: number
  snapshotBytes: number
  changeBytes: number
  /** The `publish --changes` command's run (the object uploaded, then the manifest replaced). */
  publishMs: number
  /** From the publish's end to each replica's /-/status showing the change served; null: not within 60 s. */
  servedAfterMs: Array<number | null>
  /** The largest language's count through nginx before the change, and every count of 20 answers after. */
  viaNginx: { countBefore: number, countsAfter: number[] }
  /** Per replica, object name → bytes, as each logged its downloads: at the start, and for the change. */
  downloadedAtStart: Array<Record<string, number>>
  downloaded: Array<Record<string, number>>
  /** Each replica's VmRSS once the change is served. */
  rssBytes: number[]
}

export interface SizeResult {
  label: string
  format: SnapshotFormat
  totalItems: number
  items: Record<string, number>
  companies: number
  file: string
  fileBytes: number
  load: LoadFigures
  hot: WorkloadResult
  cold: WorkloadResult
  /** One per --reload-rounds; absent with --reload-window 0. */
  reloads?: ReloadResult[]
  /** The change workload, on JSON Lines snapshots with a reload window. */
  changes?: ChangesResult[]
  /** The fleet workload (--fleet), on the largest size when it is JSON Lines; a string says why it did not run. */
  fleet?: FleetResult | string
  /** The headline figures, derived from the above once (sizeFigures), for the report and BENCHMARKS.md. */
  figures: SizeFigures
  /** From 1M items: whether each trick of src/snapshot/memory-policy.ts still pays (bench/memory-policy.ts). */
  memoryPolicy?: PolicyResult
}

/** What BENCHMARKS.md's table shows for one size, derived from the measured figures (sizeFigures). */
export interface SizeFigures {
  /** Service first answer ÷ the bare parse's (readyMs ÷ readyMs). */
  firstAnswerVsBare: number
  /** The service's settled RSS after its first load (forced GC; the idle figure where none could be forced). */
  settledRssBytes: number
  settledRssVsFile: number
  /** Over every reload round: the longest event-loop stall (prom-client's lag max), ms; null without a reload or a figure. */
  reloadStallMaxMs: number | null
  /** Over every reload round: the longest time from the rename to the reload counted; null without a reload or when one never counted. */
  reloadMsMax: number | null
  /** Over every reload round: the highest VmHWM of the reload window. */
  reloadPeakRssBytes: number | null
  /** With a baseline: service ÷ baseline (req/s for pages; time and bytes for the load, lower is better). */
  versusBaseline?: { hot: number, cold: number, firstAnswer: number, peakRss: number, settledRss: number }
  /** The baseline's reloads (--reload-baseline): the longest stall and the longest reload, as the service's above. */
  baselineReload?: { stallMaxMs: number | null, msMax: number | null }
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

/** A build that was measured: its checkout, and the flags added after the bench's own. */
export interface Build {
  dir: string
  /** `git rev-parse --short HEAD` of the checkout, or "not a git checkout". */
  commit: string
  dirtyFiles: number
  args: string[]
  /** The processes serving (WORKERS, from a `--workers` in args; the bench scrubs the environment): "1", "2", "auto". */
  workers: string
}

export interface BenchResult {
  /** The shape of this file: raised when a field is renamed or removed (bench/render-report.ts reads it). */
  resultsVersion: typeof RESULTS_VERSION
  startedAt: string
  finishedAt: string
  machine: Machine
  /** The checkout whose dist/server.js was measured. */
  service: Build
  /** The second build measured in the same run (--baseline, --baseline-args), if any. */
  baseline?: Build
  /** Busy cores of the machine over a few seconds before the run: should be about 0. */
  busyCoresBefore: number
  /** The load client and its version ('wrk 4.1.0'); results written before it was recorded: autocannon. */
  client?: string
  command: string
  options: BenchOptions
  sizes: SizeResult[]
  targets: Target[]
}

export const RESULTS_VERSION = 1

// Cores used by other processes above which a run is flagged as disturbed.
export const NOISY_CORES = 0.15

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`
const kb = (bytes: number): string => `${(bytes / 1e3).toFixed(1)} KB`
const ratio = (x: number): string => `${x.toFixed(2)}×`
const int = (x: number): string => Math.round(x).toLocaleString('en-US')
const ms = (x: number): string => x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2)
const seconds = (milliseconds: number): string => `${(milliseconds / 1000).toFixed(2)} s`
/** Milliseconds that may be missing: null when not read, undefined in results written before the figure was. */
const msOrNa = (x: number | null | undefined): string => x === null || x === undefined ? 'n/a' : `${ms(x)} ms`
const failures = (r: LoadResult): string => `${r.errors}·${r.non2xx}·${r.timeouts}`
const formatName = (f: SnapshotFormat): string => f === 'jsonl' ? 'JSON Lines' : 'JSON'
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
      name: `Time to first answer, ${largest.label} (${formatName(largest.format)})`,
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

/** A markdown table column: its header, its cell in the alignment row ('---', '--:', ':-:') and a row's cell. */
type Column<Row> = [string, string, (row: Row) => string]

function table<Row> (columns: ReadonlyArray<Column<Row>>, rows: readonly Row[]): string[] {
  return [
    `| ${columns.map(c => c[0]).join(' | ')} |`,
    `|${columns.map(c => c[1]).join('|')}|`,
    ...rows.map(row => `| ${columns.map(c => c[2](row)).join(' | ')} |`)
  ]
}

const capital = (name: string): string => `${name.slice(0, 1).toUpperCase()}${name.slice(1)}`
/** "a and b", "a, b and c". */
const listed = (parts: readonly string[]): string => `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1] ?? ''}`
/** A pooled ratio in bold, with the range over the rounds in brackets when there were several. */
const pooled = (x: number, rounds: readonly number[]): string =>
  `**${ratio(x)}**${rounds.length > 1 ? ` (${ratio(Math.min(...rounds))}–${ratio(Math.max(...rounds))})` : ''}`

function describeBuild (name: string, b: Build): string {
  return `${name}: \`${b.dir}/dist/server.js\`, ${b.commit}${b.dirtyFiles > 0 ? ` + ${b.dirtyFiles} uncommitted files` : ''}` +
    `${b.args.length > 0 ? `, with \`${b.args.join(' ')}\`` : ''}${b.workers === '1' ? '' : ` (WORKERS=${b.workers}: RSS and CPU figures are the primary's only)`}.`
}

export function markdown (result: BenchResult): string {
  const o = result.options
  const lines: string[] = []
  const m = result.machine
  const withBaseline = result.baseline !== undefined
  // The servers under traffic: a round measures each in turn.
  const servers = withBaseline ? ['service', 'baseline', 'ceiling'] : ['service', 'ceiling']
  lines.push(`Run ${result.startedAt} → ${result.finishedAt} · \`${result.command}\``)
  lines.push('')
  lines.push(`Machine: ${m.nproc} cores (${m.cpu}), ${mb(m.memoryBytes)} RAM, Linux ${m.kernel}, Node ${m.node}.`)
  lines.push(describeBuild('Service', result.service))
  if (result.baseline !== undefined) lines.push(describeBuild('Baseline', result.baseline))
  const client = result.client ?? 'autocannon'
  lines.push(`Load: ${client}${client.startsWith('wrk') ? ' (one thread, its own process)' : ' (in the bench\'s process)'}, ${o.connections} connections; per workload a ${o.warmupSeconds} s warm-up of each server, then ${o.rounds} round(s) of ` +
    `${o.durationSeconds} s on each of the ${listed(servers)}, one at a time, pooled. ` +
    `Service${withBaseline ? ' and baseline' : ''}: \`node ${o.nodeArgs.map(arg => `${arg} `).join('')}dist/server.js --log-level warn --watch false\`${withBaseline || result.service.args.length > 0 ? ' + the flags above' : ''}.`)
  lines.push('')
  lines.push(`### Throughput: the service against ${withBaseline ? 'the baseline and ' : ''}the ceiling`)
  lines.push('')
  type Row = { label: string, name: string, w: WorkloadResult, runs: LoadResult[] }
  const rows: Row[] = result.sizes.flatMap(size => (['hot', 'cold'] as const).map(name => {
    const w = size[name]
    return { label: size.label, name, w, runs: [w.explore, ...(w.baseline === undefined ? [] : [w.baseline.result]), w.ceiling] }
  }))
  const run = (row: Row, i: number): LoadResult => row.runs[i] ?? row.w.explore
  const versus = (row: Row): string => row.w.baseline === undefined ? 'n/a' : pooled(row.w.baseline.ratio, row.w.baseline.roundRatios)
  lines.push(...table<Row>([
    ['Snapshot', '---', r => r.label],
    ['Workload', '---', r => r.name],
    ...servers.map((name, i): Column<Row> => [`${capital(name)} req/s`, '--:', r => int(run(r, i).requestsPerSecond)]),
    ...(withBaseline ? [['Service ÷ baseline', '--:', versus] satisfies Column<Row>] : []),
    [withBaseline ? 'Service ÷ ceiling' : 'Ratio', '--:', r => pooled(r.w.ratio, r.w.roundRatios)],
    ...servers.map((name, i): Column<Row> => [`${capital(name)} p50 / p99`, '--:', r => `${ms(run(r, i).p50Ms)} / ${ms(run(r, i).p99Ms)} ms`]),
    [`Err·non-2xx·timeouts (${servers.join(' / ')})`, ':-:', r => r.runs.map(failures).join(' / ')],
    ['Mean body', '--:', r => kb(r.w.meanBodyBytes)],
    [`CPU ${servers.join(' / ')} / client`, ':-:', r => `${r.runs.map(x => x.serverCores.toFixed(2)).join(' / ')} / ${r.runs.map(x => x.clientCores.toFixed(2)).join('–')}`],
    ['Other load', '--:', r => Math.max(...r.runs.map(x => x.otherCores)).toFixed(2)]
  ], rows))
  lines.push('')
  lines.push(`${withBaseline ? 'Ratios' : 'Ratio'}: pooled, with the range over rounds in brackets. ` +
    'CPU is in cores during the measured runs (1.00 = one core all the time); the client is ' +
    `${client.startsWith('wrk') ? 'wrk\'s process' : 'the benchmark process running autocannon'} (${servers.map(name => `${name} run`).join('–')}); other load is every other process on the machine ` +
    `(the ${withBaseline ? 'largest of the three' : 'larger of the two'} runs).`)
  const noisy = rows.some(r => r.runs.some(x => x.otherCores > NOISY_CORES))
  if (noisy || result.busyCoresBefore > NOISY_CORES) {
    lines.push('')
    lines.push(`**Warning: other processes were busy** (${result.busyCoresBefore.toFixed(2)} cores before the run; see "Other load"): ` +
      'these figures are not a clean measurement.')
  }
  lines.push('')
  lines.push(`### Load: the service${withBaseline ? ' and the baseline' : ''} against a bare parse in its own process`)
  lines.push('')
  const loaded = withBaseline ? 'service / baseline' : 'service'
  const mark = (x: LoadMeasure): string => x.gcRssBytes === null ? '†' : ''
  const settled = (x: LoadMeasure): string => `${mb(settledRss(x))}${mark(x)}`
  // Service, baseline (if any) and bare, in the order the headers name them.
  const loads = (size: SizeResult): LoadMeasure[] => [size.load.service, ...(size.load.baseline === undefined ? [] : [size.load.baseline.load]), size.load.bare]
  // Per figure: service (/ baseline) / bare, then service ÷ bare and (service ÷ baseline).
  const figure = (title: string, bare: string, text: (x: LoadMeasure) => string, value: (x: LoadMeasure) => number): Array<Column<SizeResult>> => [
    [`${title} (${loaded} / ${bare})`, '--:', size => loads(size).map(text).join(' / ')],
    [withBaseline ? 'Service ÷ bare' : 'Ratio', '--:', size => `**${ratio(value(size.load.service) / value(size.load.bare))}**`],
    ...(withBaseline
      ? [['Service ÷ baseline', '--:', size => size.load.baseline === undefined ? 'n/a' : `**${ratio(value(size.load.service) / value(size.load.baseline.load))}**`] satisfies Column<SizeResult>]
      : [])
  ]
  lines.push(...table<SizeResult>([
    ['Snapshot', '---', size => size.label],
    ['Format', '---', size => formatName(size.format)],
    ['File', '--:', size => mb(size.fileBytes)],
    ['Items', '--:', size => int(size.totalItems)],
    ...figure('First answer', 'bare parse', x => seconds(x.readyMs), x => x.readyMs),
    ...figure('Peak RSS', 'bare', x => mb(x.peakRssBytes), x => x.peakRssBytes),
    ...figure('Settled RSS', 'bare', settled, settledRss),
    ['Settled RSS ÷ file', '--:', size => `**${ratio(settledRss(size.load.service) / size.fileBytes)}**`],
    [`RSS idle, no GC (${loaded} / bare)`, '--:', size => loads(size).map(x => mb(x.idleRssBytes)).join(' / ')],
    [withBaseline ? 'RSS after traffic (service / baseline)' : 'RSS after traffic', '--:',
      size => [size.load.exploreAfterTrafficRssBytes, size.load.baseline?.afterTrafficRssBytes].flatMap(x => x === undefined ? [] : [mb(x)]).join(' / ')]
  ], result.sizes))
  const restarted = result.sizes.filter(size => size.load.serviceRestart !== undefined)
  if (restarted.length > 0) {
    lines.push('')
    lines.push('### A restart: from the version image the first start wrote')
    lines.push('')
    const restartOf = (size: SizeResult): RestartMeasure => size.load.serviceRestart as RestartMeasure
    lines.push(...table<SizeResult>([
      ['Snapshot', '---', size => size.label],
      ['First answer (restart / first start)', '--:', size => `${seconds(restartOf(size).load.readyMs)} / ${seconds(size.load.service.readyMs)}`],
      ['Restart ÷ first start', '--:', size => `**${ratio(restartOf(size).load.readyMs / size.load.service.readyMs)}**`],
      ['Image read alone', '--:', size => restartOf(size).imageReadMs === null ? 'no image' : `${int(restartOf(size).imageReadMs as number)} ms`],
      ['Restart ÷ read alone', '--:', size => restartOf(size).imageReadMs === null ? 'n/a' : `**${ratio(restartOf(size).load.readyMs / (restartOf(size).imageReadMs as number))}**`],
      ['Image ÷ file', '--:', size => restartOf(size).imageBytes === null ? 'n/a' : `**${ratio((restartOf(size).imageBytes as number) / size.fileBytes)}**`],
      ['Peak / settled RSS (restart)', '--:', size => `${mb(restartOf(size).load.peakRssBytes)} / ${mb(settledRss(restartOf(size).load))}`],
      ['Settled ÷ first start\'s', '--:', size => `**${ratio(settledRss(restartOf(size).load) / settledRss(size.load.service))}**`],
      ['Peak ÷ its settled', '--:', size => `**${ratio(restartOf(size).load.peakRssBytes / settledRss(restartOf(size).load))}**`],
      ...(withBaseline
        ? [['Baseline restart', '--:', size => size.load.baseline?.restart === undefined ? 'n/a' : seconds(size.load.baseline.restart.load.readyMs)] satisfies Column<SizeResult>]
        : [])
    ], restarted))
    lines.push('')
    lines.push('The service stopped after its first start (SIGTERM, once its image is written) and started again with the same ' +
      '`STATE_DIR`. Image read alone: its bytes read into one buffer by the bench, page cache warm (the floor of this design, ADR 033).')
  }
  lines.push('')
  lines.push('Each figure from a process of its own, started alone on a quiet machine. First answer: from the spawn to the first 200 of ' +
    `\`GET /-/readyz\` (${loaded.replace(' / ', ', ')}) or to "parsed" (bare: \`readFile\` + \`JSON.parse\` for JSON, \`bench/bare-parse.ts\`; ` +
    'for JSON Lines the file read line by line with `readline` and each line `JSON.parse`d, `bench/bare-parse-lines.ts`; both run by plain node). Peak: VmHWM. Settled: VmRSS after a full GC forced from outside ' +
    '(SIGUSR1, then the inspector\'s HeapProfiler.collectGarbage; † where port 9229 was taken: idle figure instead). ' +
    `Idle: VmRSS ${o.settleSeconds} s after load without a forced GC (V8 may give memory back later). ` +
    `"RSS after traffic": the traffic process${withBaseline ? 'es' : ''} 5 s after both workloads.`)
  const reloads = result.sizes.flatMap(size => (size.reloads ?? []).map(r => ({ size, r })))
  const firstReload = reloads[0]?.r
  if (firstReload !== undefined) {
    lines.push('')
    lines.push('### Reload under load: the snapshot replaced while the hot paths are served')
    lines.push('')
    type ReloadRow = (typeof reloads)[number]
    lines.push(...table<ReloadRow>([
      ['Snapshot', '---', ({ size }) => size.label],
      ['Format', '---', ({ size }) => formatName(size.format)],
      ['Server', '---', ({ r }) => r.contender ?? 'service'],
      ['Req/s', '--:', ({ r }) => int(r.load.requestsPerSecond)],
      ['p50 / p99 / max', '--:', ({ r }) => `${ms(r.load.p50Ms)} / ${ms(r.load.p99Ms)} / ${ms(r.load.maxMs)} ms`],
      ['Err·non-2xx·timeouts', ':-:', ({ r }) => failures(r.load)],
      ['Event-loop lag max / p99', '--:', ({ r }) => `${msOrNa(r.lagMaxMs)} / ${msOrNa(r.lagP99Ms)}`],
      // A reload that outlasts the window: its end was not under load, so the latencies miss part of it.
      ['Reload took', '--:', ({ r }) => r.reloadMs === null
        ? '**never counted**'
        : `${seconds(r.reloadMs)}${outlastedWindow(r.reloadMs, r.windowSeconds, r.reloadAtSeconds) ? ' (**outlasted the window**)' : ''}`],
      ['Peak RSS (before)', '--:', ({ r }) => `${mb(r.peakRssBytes)}${r.peakFromWindow ? '' : '‡'} (${mb(r.rssBeforeBytes)})`],
      ['RSS after', '--:', ({ r }) => mb(r.rssAfterBytes)],
      ['CPU service / client', ':-:', ({ r }) => `${r.load.serverCores.toFixed(2)} / ${r.load.clientCores.toFixed(2)}`],
      ['Other load', '--:', ({ r }) => r.load.otherCores.toFixed(2)]
    ], reloads))
    lines.push('')
    lines.push(`A fresh service with \`--watch true\` (after the flags above) on a hard link to the snapshot, warmed up for ${o.warmupSeconds} s; then ` +
      `${firstReload.windowSeconds} s of hot load (${o.connections} connections), ${firstReload.reloadAtSeconds} s into which a copy of the file one ` +
      'newline longer (the same items, another file) is renamed over it. Latencies over the whole window. Reload took: from the rename to ' +
      '`/-/status` counting it, polled under the load, the watcher\'s debounce included. Event-loop lag: prom-client\'s, scraped just ' +
      'before the rename (which resets it) and after both the window and the reload. Peak: VmHWM, reset to the current RSS just before ' +
      'the window (clear_refs; ‡ where that was refused: since the start); before: VmRSS then; after: VmRSS at the end.')
  }
  const changes = result.sizes.flatMap(size => (size.changes ?? []).map(c => ({ size, c })))
  if (changes.length > 0) {
    lines.push('')
    lines.push('### A change file under load')
    lines.push('')
    type ChangeRow = (typeof changes)[number]
    lines.push(...table<ChangeRow>([
      ['Snapshot', '---', ({ size }) => size.label],
      ['Change file', '---', ({ c }) => `${int(c.upserts)} upserts, ${int(c.deletes)} deletes, ${mb(c.changeBytes)}`],
      ['Load', '--:', ({ c }) => `${c.connections ?? o.connections} connections`],
      ['Applied after', '--:', ({ c }) => c.reloadMs === null ? '**never counted**' : `${ms(c.reloadMs)} ms`],
      ['Applied in (service\'s log)', '--:', ({ c }) => msOrNa(c.appliedMs)],
      ['Event-loop lag max / p99', '--:', ({ c }) => `${msOrNa(c.lagMaxMs)} / ${msOrNa(c.lagP99Ms)}`],
      ['Lag max until applied; the same load before it', '--:', ({ c }) => `${msOrNa(c.lagMaxUntilCountedMs)}; ${msOrNa(c.lagMaxBeforeMs)}`],
      ['p50 / p99 / max', '--:', ({ c }) => `${ms(c.load.p50Ms)} / ${ms(c.load.p99Ms)} / ${ms(c.load.maxMs)} ms`],
      ['RSS before → after (peak)', '--:', ({ c }) => `${mb(c.rssBeforeBytes)} → ${mb(c.rssAfterBytes)} (${mb(c.peakRssBytes)})`],
      ['Settled RSS, no requests: first file after a start, then each next (× its size)', '--:', ({ size, c }) =>
        c.settled !== undefined ? settledRises(c.settled) : (size.changes ?? []).some(other => other.settled !== undefined) ? 'in the row above' : 'not measured']
    ], changes))
    lines.push('')
    const loads = [...new Set(changes.map(({ c }) => c.connections ?? o.connections))]
    lines.push('A fresh service with `--watch true` whose change directory exists from the start; the change file is written beside it and ' +
      `renamed into the directory during hot load (${loads.map(n => `${n} connections`).join(', then ')}` +
      `${o.loadRate === undefined ? ', each asking again when answered' : `, at ${o.loadRate} req/s`}; a lighter load, where the load alone holds the event loop less, shows the change's own stall). ` +
      'Event-loop lag: prom-client\'s, the longest interval between its samples 10 ms apart, so up to 10 ms above the longest hold. Lag max until applied: ' +
      'from the rename to the count (one poll after it); before it: the same load in the seconds before the rename. Applied after: from the rename to `/-/status` counting it, the watcher\'s debounce (150 ms by default) included, ' +
      'polled under the load. Applied in: the service\'s own "change file applied" log line, from the debounce\'s end to the new version served (the service logs at info, requests unlogged, for this workload). ' +
      'Settled RSS (the memory goal: + 3× the file): another fresh service with no requests, full collections and readings 20 s apart (V8\'s memory reducer) until two agree within 2 MB, ' +
      'before the file, after it and after each of five more of the next items (bench/change-memory.ts); the goal is judged by the rise per file by least squares over the six. ' +
      'Single files scatter about it, since V8\'s heap and malloc\'s arenas grow in steps that the next files fill, and the first or second file after a start also pays, once a process, ' +
      'for V8 first optimizing the change path (docs/decisions/026).')
  }
  const fleets = result.sizes.flatMap(size => size.fleet === undefined ? [] : [{ size, f: size.fleet }])
  if (fleets.length > 0) {
    lines.push('')
    lines.push('### A change published to a fleet (--fleet)')
    lines.push('')
    for (const { size, f } of fleets) {
      if (typeof f === 'string') {
        lines.push(`- ${size.label}: not run: ${f}`)
        continue
      }
      const served = f.servedAfterMs.map(after => after === null ? '**never**' : `${(after / 1000).toFixed(2)} s`).join(', ')
      const bytes = (downloads: Record<string, number>): string => Object.entries(downloads).map(([name, n]) => `${name} ${int(n)} B`).join(', ') || 'nothing'
      lines.push(`- ${size.label}: the change file (${int(f.changeBytes)} B) published in ${ms(f.publishMs)} ms; served by the two replicas ${served} after ` +
        `(goal: within the ${f.pollSeconds} s poll + 1 s); downloaded for it: ${f.downloaded.map(bytes).join('; ')} (at the start: ` +
        `${f.downloadedAtStart.map(bytes).join('; ')}; the snapshot is ${int(f.snapshotBytes)} B); through nginx, count ${int(f.viaNginx.countBefore)} → ` +
        `${f.viaNginx.countsAfter.map(int).join(', ')} over 20 answers; RSS after ${f.rssBytes.map(mb).join(', ')}.`)
    }
    lines.push('')
    lines.push('Two replicas (`node dist/server.js`, SNAPSHOT_URL a manifest in moto\'s S3) behind nginx with the upstream settings ' +
      'of docs/guides/deploying.md. ' +
      'Served after: from the end of `explore-replica publish --changes` (the manifest replaced) to each replica\'s `/-/status` listing the change; ' +
      'a replica polls at its own phase, so up to a whole poll passes before it looks. Downloaded: each replica\'s own log lines, one per object.')
  }
  lines.push('')
  lines.push('### Targets')
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
  for (const size of result.sizes) {
    if (size.memoryPolicy === undefined) continue
    lines.push('')
    lines.push(`### Memory policy at ${size.label}: does each trick still pay? (bench/memory-policy.ts)`)
    lines.push('')
    lines.push(policyTable(size.memoryPolicy))
    lines.push('')
    lines.push('Each row a process of its own: a first load, then two reloads as a serving replica makes them (the served model retired ' +
      'at each swap), with no request. A trick pays when turning it off makes worse the figure it is there for, by more than 5%.')
  }
  return lines.join('\n') + '\n'
}
