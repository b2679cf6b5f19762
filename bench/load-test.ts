// One server × one workload under a load client: a warm-up, then measured runs with identical settings,
// cycling through a precomputed list of paths; rounds are pooled into one result. The client is wrk where it
// is installed (a C client in its own process: it asks faster than the service answers), else autocannon,
// in this process; a fixed rate is autocannon's alone (wrk has none).
import autocannon from 'autocannon'
import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REQUEST_HEADERS } from './http-headers.js'
import { childrenCpuSeconds, cpuSecondsOf, machineCpuSeconds } from './processes.js'

export type ClientName = 'wrk' | 'autocannon'

/** wrk's name and version if it is on PATH, else null. */
export function wrkVersion (): string | null {
  // `wrk -v` prints "wrk 4.1.0 [epoll] Copyright…" and exits 1.
  const run = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  return run.error === undefined ? /wrk \S+/.exec(`${run.stdout}${run.stderr}`)?.[0] ?? 'wrk' : null
}

export interface LoadSettings {
  client: ClientName
  connections: number
  warmupSeconds: number
  durationSeconds: number
  /** Requests per second over all connections (autocannon's overallRate); undefined: as fast as they go. */
  rate?: number
}

/** What a run of either client gives. */
interface RunResult {
  requests: number
  seconds: number
  errors: number
  timeouts: number
  non2xx: number
  resets: number
  statusCodes: Record<string, number>
  bytes: number
}

/** One measured run. */
export interface Sample extends RunResult {
  /** Every response's latency in ms, sorted. */
  latencies: Float64Array
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
  /** The same for the load client (wrk's process, or the benchmark's own where autocannon runs). */
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

async function runAutocannon (port: number, paths: readonly string[], connections: number, seconds: number, latencies?: Latencies, rate?: number): Promise<RunResult> {
  const perConnection = shares(paths, connections)
  let next = 0
  const result = await autocannon({
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
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count
  return {
    requests: result.requests.total,
    seconds: result.duration,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    resets: result.resets,
    statusCodes,
    bytes: result.throughput.total
  }
}

// wrk's script: every request built once from the paths file, then cycled from the given start; at the end,
// the totals and 1,000 latency quantiles (wrk 4 gives percentiles, not each response) as one JSON line.
const WRK_SCRIPT = `
local requests, at = {}, 0
local headers = { ${Object.entries(REQUEST_HEADERS).map(([name, value]) => `[${JSON.stringify(name)}] = ${JSON.stringify(value)}`).join(', ')} }
function init (args)
  for line in io.lines(args[1]) do requests[#requests + 1] = wrk.format("GET", line, headers) end
  at = tonumber(args[2]) % #requests
end
function request () at = at % #requests + 1; return requests[at] end
function done (summary, latency)
  local q = {}
  for i = 1, 1000 do q[i] = string.format("%d", latency:percentile(i / 10)) end
  local e = summary.errors
  io.write(string.format('\\nWRK {"requests":%d,"micros":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"quantiles":[%s]}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout, table.concat(q, ",")))
end
`

let wrkFiles: { dir: string, script: string, lists: WeakMap<readonly string[], string> } | undefined

/** The path list as a file wrk reads, written once per list. */
function wrkFilesFor (paths: readonly string[]): { script: string, list: string } {
  if (wrkFiles === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'explore-bench-wrk-'))
    process.once('exit', () => { rmSync(dir, { recursive: true, force: true }) })
    const script = join(dir, 'paths.lua')
    writeFileSync(script, WRK_SCRIPT)
    wrkFiles = { dir, script, lists: new WeakMap() }
  }
  let list = wrkFiles.lists.get(paths)
  if (list === undefined) {
    list = join(wrkFiles.dir, `paths-${Math.random().toString(36).slice(2)}.txt`)
    writeFileSync(list, `${paths.join('\n')}\n`)
    wrkFiles.lists.set(paths, list)
  }
  return { script: wrkFiles.script, list }
}

/** One thread: wrk's own guidance for a client that shares the machine with the server. */
async function runWrk (port: number, paths: readonly string[], connections: number, seconds: number, startAt: number, latencies?: Latencies): Promise<RunResult> {
  const { script, list } = wrkFilesFor(paths)
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', `${TIMEOUT_SECONDS}s`, '-s', script, `http://127.0.0.1:${port}`, '--', list, String(startAt)]
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 1 << 20 }, (error, out, err) => {
      if (error !== null) reject(new Error(`wrk ${args.join(' ')} failed: ${err.trim() || error.message}`))
      else resolve(out)
    })
  })
  const line = /^WRK (.*)$/m.exec(stdout)?.[1]
  if (line === undefined) throw new Error(`wrk printed no totals:\n${stdout}`)
  const r = JSON.parse(line) as { requests: number, micros: number, bytes: number, connect: number, read: number, write: number, status: number, timeout: number, quantiles: number[] }
  if (latencies !== undefined) {
    // Each response stands for the quantile at its rank: pooled rounds then weigh by their requests.
    for (let i = 0; i < r.requests; i++) latencies.add((r.quantiles[Math.floor(i * r.quantiles.length / r.requests)] ?? 0) / 1000)
  }
  return {
    requests: r.requests,
    seconds: r.micros / 1e6,
    errors: r.connect + r.read + r.write,
    timeouts: r.timeout,
    // wrk counts answers of 400 and above; a 3xx is not an error to it.
    non2xx: r.status,
    resets: 0,
    statusCodes: {},
    bytes: r.bytes
  }
}

async function run (settings: LoadSettings, port: number, paths: readonly string[], seconds: number, startAt: number, latencies?: Latencies): Promise<RunResult> {
  if (settings.client === 'wrk' && settings.rate === undefined) return await runWrk(port, paths, settings.connections, seconds, startAt, latencies)
  const start = paths.length > 0 ? startAt % paths.length : 0
  const rotated = start === 0 ? paths : [...paths.slice(start), ...paths.slice(0, start)]
  return await runAutocannon(port, rotated, settings.connections, seconds, latencies, settings.rate)
}

export async function warmUp (port: number, paths: readonly string[], settings: LoadSettings): Promise<void> {
  if (settings.warmupSeconds > 0) await run(settings, port, paths, settings.warmupSeconds, 0)
}

/**
 * One measured run. `startAt` rotates the list, so a later round goes on where the previous one stopped
 * instead of asking again for the pages it has just asked for.
 */
export async function sample (port: number, serverPid: number, paths: readonly string[], settings: LoadSettings, startAt = 0): Promise<Sample> {
  const latencies = new Latencies()
  const machineBefore = await machineCpuSeconds()
  const serverBefore = await cpuSecondsOf(serverPid)
  // autocannon runs in this process, wrk in a child: what each used shows in one of the two.
  const clientBefore = process.cpuUsage()
  const childrenBefore = await childrenCpuSeconds()
  const started = performance.now()
  const result = await run(settings, port, paths, settings.durationSeconds, startAt, latencies)
  const wall = (performance.now() - started) / 1000
  const client = process.cpuUsage(clientBefore)
  const childrenAfter = await childrenCpuSeconds()
  const serverAfter = await cpuSecondsOf(serverPid)
  const machineAfter = await machineCpuSeconds()
  const serverCores = (serverAfter - serverBefore) / wall
  const clientCores = ((client.user + client.system) / 1e6 + childrenAfter - childrenBefore) / wall
  return {
    ...result,
    latencies: latencies.sorted(),
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
