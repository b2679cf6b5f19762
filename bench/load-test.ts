// One server × one workload under autocannon: a warm-up, then measured runs with identical settings, each
// connection cycling through its own share of a precomputed list of paths; rounds are pooled into one result.
import autocannon from 'autocannon'
import { REQUEST_HEADERS } from './http-headers.js'
import { cpuSecondsOf, machineCpuSeconds } from './processes.js'

export interface LoadSettings {
  connections: number
  warmupSeconds: number
  durationSeconds: number
  /** Requests per second over all connections (autocannon's overallRate); undefined: as fast as they go. */
  rate?: number
}

/** One measured run. */
export interface Sample {
  requests: number
  seconds: number
  /** Every response's latency in ms, sorted. */
  latencies: Float64Array
  errors: number
  timeouts: number
  non2xx: number
  resets: number
  statusCodes: Record<string, number>
  bytes: number
  serverCores: number
  clientCores: number
  otherCores: number
}

export interface LoadResult {
  requests: number
  seconds: number
  requestsPerSecond: number
  /** req/s of each round, to judge the noise. */
  roundRequestsPerSecond: number[]
  p50Ms: number
  p99Ms: number
  meanMs: number
  maxMs: number
  errors: number
  timeouts: number
  non2xx: number
  resets: number
  statusCodes: Record<string, number>
  /** Response bytes (headers included) per request. */
  bytesPerRequest: number
  /** CPU the server used during the measured runs, in cores (1 = one core busy all the time). */
  serverCores: number
  /** The same for the benchmark process itself, where autocannon runs. */
  clientCores: number
  /** Busy cores of the whole machine minus the two above, in the worst round: other work spoils the figures. */
  otherCores: number
}

// Seconds before a request counts as a timeout (autocannon's default): a page slower than this has failed.
const TIMEOUT_SECONDS = 10

/**
 * Connection k gets paths k, k + n, k + 2n… (n connections), so together they walk the whole list in order
 * and, on the cold list, no page repeats until every page has been asked for once.
 */
function shares (paths: readonly string[], connections: number): autocannon.Request[][] {
  const out: autocannon.Request[][] = Array.from({ length: connections }, () => [])
  paths.forEach((path, i) => out[i % connections]?.push({ method: 'GET', path }))
  // A connection left without a path (fewer paths than connections) would ask for '/' instead.
  return out.map((share, k) => share.length > 0 ? share : [{ method: 'GET', path: paths[k % paths.length] ?? '/' }])
}

function percentile (sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))] ?? 0
}

/** Latencies in milliseconds, unrounded: autocannon's histogram keeps whole milliseconds only. */
class Latencies {
  private values = new Float64Array(1 << 16)
  private count = 0

  add (ms: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.count++] = ms
  }

  sorted (): Float64Array {
    return this.values.slice(0, this.count).sort()
  }
}

async function run (port: number, paths: readonly string[], connections: number, seconds: number, latencies?: Latencies, rate?: number): Promise<autocannon.Result> {
  const perConnection = shares(paths, connections)
  let next = 0
  return await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    ...(rate === undefined ? {} : { overallRate: rate }),
    duration: seconds,
    timeout: TIMEOUT_SECONDS,
    pipelining: 1,
    headers: { ...REQUEST_HEADERS },
    setupClient (client) {
      // Static requests: every request buffer is built once per connection, not per request.
      client.setRequests(perConnection[next++ % connections] ?? [])
      // autocannon appends every body chunk to a string (UTF-8 decoding included) only to offer it to
      // verifyBody, which is not used: that would be load-generator work, not server work.
      client.pipelinedRequests.addBody = () => {}
      if (latencies !== undefined) client.on('response', (_status: number, _bytes: number, ms: number) => latencies.add(ms))
    }
  })
}

export async function warmUp (port: number, paths: readonly string[], settings: LoadSettings): Promise<void> {
  if (settings.warmupSeconds > 0) await run(port, paths, settings.connections, settings.warmupSeconds)
}

/**
 * One measured run. `startAt` rotates the list, so a later round goes on where the previous one stopped
 * instead of asking again for the pages it has just asked for.
 */
export async function sample (port: number, serverPid: number, paths: readonly string[], settings: LoadSettings, startAt = 0): Promise<Sample> {
  const start = paths.length > 0 ? startAt % paths.length : 0
  const rotated = start === 0 ? paths : [...paths.slice(start), ...paths.slice(0, start)]
  const latencies = new Latencies()
  const machineBefore = await machineCpuSeconds()
  const serverBefore = await cpuSecondsOf(serverPid)
  const clientBefore = process.cpuUsage()
  const started = performance.now()
  const result = await run(port, rotated, settings.connections, settings.durationSeconds, latencies, settings.rate)
  const wall = (performance.now() - started) / 1000
  const client = process.cpuUsage(clientBefore)
  const serverAfter = await cpuSecondsOf(serverPid)
  const machineAfter = await machineCpuSeconds()
  const serverCores = (serverAfter - serverBefore) / wall
  const clientCores = (client.user + client.system) / 1e6 / wall
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count
  return {
    requests: result.requests.total,
    seconds: result.duration,
    latencies: latencies.sorted(),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    resets: result.resets,
    statusCodes,
    bytes: result.throughput.total,
    serverCores,
    clientCores,
    otherCores: Math.max(0, (machineAfter.busy - machineBefore.busy) / wall - serverCores - clientCores)
  }
}

/** Pools rounds: throughput over their total time, percentiles over every response. */
export function summarize (samples: readonly Sample[]): LoadResult {
  const sum = (pick: (s: Sample) => number): number => samples.reduce((n, s) => n + pick(s), 0)
  const requests = sum(s => s.requests)
  const seconds = sum(s => s.seconds)
  const pooled = new Float64Array(sum(s => s.latencies.length))
  let at = 0
  for (const s of samples) { pooled.set(s.latencies, at); at += s.latencies.length }
  pooled.sort()
  const statusCodes: Record<string, number> = {}
  for (const s of samples) for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n
  const timeWeighted = (pick: (s: Sample) => number): number => seconds > 0 ? sum(s => pick(s) * s.seconds) / seconds : 0
  return {
    requests,
    seconds,
    requestsPerSecond: seconds > 0 ? requests / seconds : 0,
    roundRequestsPerSecond: samples.map(s => s.seconds > 0 ? s.requests / s.seconds : 0),
    p50Ms: percentile(pooled, 50),
    p99Ms: percentile(pooled, 99),
    meanMs: pooled.reduce((a, b) => a + b, 0) / Math.max(1, pooled.length),
    maxMs: pooled[pooled.length - 1] ?? 0,
    errors: sum(s => s.errors),
    timeouts: sum(s => s.timeouts),
    non2xx: sum(s => s.non2xx),
    resets: sum(s => s.resets),
    statusCodes,
    bytesPerRequest: requests > 0 ? sum(s => s.bytes) / requests : 0,
    serverCores: timeWeighted(s => s.serverCores),
    clientCores: timeWeighted(s => s.clientCores),
    otherCores: Math.max(0, ...samples.map(s => s.otherCores))
  }
}
