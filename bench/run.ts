// `npm run bench`: the service against its ceiling (and a baseline build, if given) on generated snapshots of
// several sizes (hot and cold workloads), and its load cost against a bare read + parse; prints the tables
// and writes bench/results/.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { appendFile, copyFile, link, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { availableParallelism, release, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import type { CeilingJob, CeilingMessage } from './ceiling-server.js'
import { forceGc } from './force-gc.js'
import { REQUEST_HEADERS, replayedHeaders } from './http-headers.js'
import { sample, summarize, warmUp, wrkVersion, type ClientName, type LoadSettings, type Sample } from './load-test.js'
import { readOptions, USAGE, type BenchOptions } from './options.js'
import {
  childEnv, freePort, get, killAllNow, logEntries, machineCpuSeconds, memoryOf, startChild, stopAll, stopChild, waitForOutput, waitUntilAnswering, type Child, type Memory
} from './processes.js'
import {
  checkTargets, markdown, NOISY_CORES, outlastedWindow, RESULTS_VERSION, sizeFigures, type BenchResult, type Build, type ChangesResult, type LoadMeasure, type RestartMeasure, type Machine, type ReloadResult, type SizeResult, type WorkloadResult,
  settledRises
} from './report.js'
import { plainScript } from './plain-script.js'
import { ensureSnapshot, formatFor, warmPageCache, type SnapshotInfo } from './snapshots.js'
import { runMemoryPolicy } from './memory-policy.js'
import { CHANGE_DELETES, CHANGE_UPSERTS, flushed, writeChangeFile } from './change-file.js'
import { changeMemory } from './change-memory.js'
import { fleetChange, fleetMissing } from './fleet-change.js'

/** Sizes from which `npm run bench` checks that each memory trick still pays (a few minutes each). */
const MEMORY_POLICY_FROM_ITEMS = 1_000_000
import { coldWorkload, hotWorkload, type Workload } from './workloads.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
const AUTOCANNON_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')) as { version: string }).version
const DATA_DIR = join(ROOT, 'bench', '.data')
const RESULTS_DIR = join(ROOT, 'bench', 'results')
const LOCK_FILE = join(DATA_DIR, 'run.lock')
// The reload workload's own directory: the service watches its snapshot's directory, and the cached
// snapshots next to it must never be renamed over.
const RELOAD_DIR = join(DATA_DIR, 'reload')
// A 200k-item snapshot loads in seconds; a minute means something is wrong, not slow.
const STARTUP_TIMEOUT_MS = 120_000
/**
 * The change workload's second, lighter load: 4 connections, each asking again when answered. Under the
 * bench's 32 the load alone can hold this 2-core machine's event loop near the change-file stall goal of 20 ms;
 * at 4 it holds it less, so a stall there is mostly the change's (docs/decisions/026).
 */
const STEADY_CONNECTIONS = 4
// Cold pages fetched before the load to learn the mean answer size (and check counts against the generator's).
const COLD_SAMPLE = 1000
// "RSS after traffic" is informational: a short pause, not a full settle.
const AFTER_TRAFFIC_SECONDS = 5

function log (message: string): void {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
}

// ---------------------------------------------------------------------------------------------------------
// Setup: the build, the machine.

async function newestChange (path: string): Promise<number> {
  const info = await stat(path)
  if (!info.isDirectory()) return info.mtimeMs
  let newest = info.mtimeMs
  for (const name of await readdir(path)) newest = Math.max(newest, await newestChange(join(path, name)))
  return newest
}

/** `npm run build` in the service's checkout when its dist/ is missing or older than anything it is built from. */
async function ensureBuild (serviceRoot: string): Promise<void> {
  if (!existsSync(join(serviceRoot, 'node_modules'))) {
    throw new Error(`${serviceRoot} has no node_modules: run npm ci there, or link this checkout's (ln -s ${join(ROOT, 'node_modules')} ${serviceRoot}/)`)
  }
  const entry = join(serviceRoot, 'dist', 'server.js')
  const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json']
  const sources = await Promise.all(inputs.map(async p => await newestChange(join(serviceRoot, p))))
  if (existsSync(entry) && (await stat(entry)).mtimeMs >= Math.max(...sources)) return
  log(`${join(serviceRoot, 'dist')} is missing or stale: npm run build`)
  const build = spawnSync('npm', ['run', 'build'], { cwd: serviceRoot, stdio: 'inherit' })
  if (build.status !== 0) throw new Error(`npm run build failed (exit ${String(build.status ?? build.signal)})`)
}

/**
 * One benchmark at a time: two would share two cores and spoil each other's figures (and results files).
 * The lock holds our pid; a lock whose process is gone is taken over.
 */
async function lock (): Promise<void> {
  try {
    const pid = Number((await readFile(LOCK_FILE, 'utf8')).trim())
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
      process.kill(pid, 0)
      throw new Error(`another benchmark (pid ${pid}) is running; two at once would disturb each other. (Stale? remove ${LOCK_FILE})`)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ESRCH') throw error
  }
  await writeFile(LOCK_FILE, `${process.pid}\n`)
  process.once('exit', () => {
    try {
      if (readFileSync(LOCK_FILE, 'utf8').trim() === String(process.pid)) rmSync(LOCK_FILE)
    } catch {}
  })
}

function machine (): Machine {
  let cpu = 'unknown'
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu
  } catch {}
  return { nproc: availableParallelism(), cpu, node: process.version, memoryBytes: totalmem(), kernel: release() }
}

/**
 * Waits (up to the configured time) until the machine is idle apart from us: our servers idle between runs,
 * so a busy machine means someone else's work, which would steal a core from the service or the client.
 */
async function waitForQuiet (options: BenchOptions): Promise<void> {
  if (options.quietWaitSeconds <= 0) return
  const deadline = performance.now() + options.quietWaitSeconds * 1000
  let warned = false
  for (;;) {
    const busy = await busyCores(1500)
    if (busy <= NOISY_CORES) return
    if (performance.now() > deadline) {
      log(`other processes still use ${busy.toFixed(2)} cores after ${options.quietWaitSeconds} s: measuring anyway`)
      return
    }
    if (!warned) log(`other processes use ${busy.toFixed(2)} cores: waiting up to ${options.quietWaitSeconds} s for quiet`)
    warned = true
  }
}

/** Cores the whole machine keeps busy over `ms` while we wait. */
async function busyCores (ms: number): Promise<number> {
  const before = await machineCpuSeconds()
  await sleep(ms)
  const after = await machineCpuSeconds()
  return (after.busy - before.busy) / (ms / 1000)
}

/** WORKERS as the service reads it from its flags (the last `--workers` wins); "1", its default, without one. */
function workersOf (args: readonly string[]): string {
  let workers = '1'
  args.forEach((arg, i) => {
    if (arg === '--workers') workers = args[i + 1] ?? workers
    else if (arg.startsWith('--workers=')) workers = arg.slice('--workers='.length)
  })
  return workers
}

/** What a server runs: its checkout's commit and uncommitted files, and the flags added to the bench's own. */
function buildOf ({ root, args }: Contender): Build {
  // Read-only git: which code was measured. Outside a checkout (a git archive): "not a git checkout".
  const head = spawnSync('git', ['-C', root, 'rev-parse', '--show-toplevel', '--short', 'HEAD'], { encoding: 'utf8' })
  const [top, commit] = (head.stdout ?? '').trim().split('\n')
  if (head.status !== 0 || top === undefined || commit === undefined || resolve(top) !== resolve(root)) {
    return { dir: root, commit: 'not a git checkout', dirtyFiles: 0, args, workers: workersOf(args) }
  }
  // Only the service's own files count: not the bench's, its report or the decision records, nor a
  // node_modules linked into a worktree.
  const status = spawnSync('git', ['-C', root, 'status', '--porcelain', '--', '.', ':!bench', ':!BENCHMARKS.md', ':!docs', ':!node_modules'], { encoding: 'utf8' }).stdout ?? ''
  return { dir: root, commit, dirtyFiles: status.split('\n').filter(line => line.trim() !== '').length, args, workers: workersOf(args) }
}

// ---------------------------------------------------------------------------------------------------------
// The processes.

/** A build of the service to measure: the service itself, or the baseline it is compared with. */
interface Contender {
  name: 'service' | 'baseline'
  /** The checkout, run from its dist/server.js. */
  root: string
  /** Flags after the bench's own, so they win (the service reads the last of a repeated flag). */
  args: string[]
}

/**
 * `file` serves another path than the cached snapshot; `last` flags go after the contender's own, for a
 * workload that depends on them (the reload workload's `--watch true`); `workload` names its profile.
 */
async function startExplore (contender: Contender, info: SnapshotInfo, port: number, options: BenchOptions, { file = info.file, last = [] as string[], workload = '', keepState = false } = {}): Promise<Child> {
  // The service's profiles keep the name they had before there was a baseline.
  const tag = contender.name === 'service' ? 'explore' : contender.name
  const name = `${tag}-${info.label}${workload === '' ? '' : `-${workload}`}`
  // Every thread of the process writes a profile (the parse threads too), so each process gets a
  // directory of its own, and stopExplore keeps the main thread's under the name.
  const dir = join(RESULTS_DIR, 'profiles', `.${name}`)
  if (options.profile) {
    await rm(dir, { recursive: true, force: true })
    await mkdir(dir, { recursive: true })
  }
  // Each start keeps its versions in a STATE_DIR of its own, empty: a first load costs what it costs a new
  // replica (an editor's file is copied there), and the default directory, which `npm start` uses, is left
  // alone. Set as a variable, which builds from before STATE_DIR existed ignore. `keepState`: a restart, which
  // finds what the start before it kept (its version image).
  const stateDir = stateDirOf(contender)
  if (!keepState) await rm(stateDir, { recursive: true, force: true })
  const child = startChild(contender.name, [
    ...(options.profile ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), ...options.nodeArgs, join(contender.root, 'dist', 'server.js'),
    '--snapshot-path', file, '--port', String(port), '--log-level', 'warn', '--watch', 'false', ...contender.args, ...last
  ], { cwd: contender.root, env: { ...childEnv(), STATE_DIR: stateDir } })
  if (options.profile) profiles.set(child, { dir, name })
  return child
}

const profiles = new WeakMap<Child, { dir: string, name: string }>()

function stateDirOf (contender: Contender): string {
  return join(DATA_DIR, 'state', contender.name)
}

/**
 * The start after a start: the same STATE_DIR, so the service reads the version image the first start wrote (a
 * build without images parses again); with the image's size and the time to read its bytes alone into one
 * buffer, page cache warm (the design's floor, ADR 033). Null image figures: no image was written.
 */
async function measureRestart (contender: Contender, info: SnapshotInfo, options: BenchOptions): Promise<RestartMeasure> {
  await waitForQuiet(options)
  const port = await freePort()
  const child = await startExplore(contender, info, port, { ...options, profile: false }, { keepState: true })
  const load = await measureLoad(child, waitUntilAnswering(child, `http://127.0.0.1:${port}/-/readyz`, STARTUP_TIMEOUT_MS), options)
  const dir = join(stateDirOf(contender), 'images')
  const image = (await readdir(dir).catch(() => [])).find(name => name.endsWith('.image'))
  if (image === undefined) return { load, imageBytes: null, imageReadMs: null }
  const path = join(dir, image)
  await warmPageCache(path)
  const bytes = (await stat(path)).size
  const handle = await open(path, 'r')
  const started = performance.now()
  const buffer = Buffer.allocUnsafe(bytes)
  for (let done = 0; done < bytes;) done += (await handle.read(buffer, done, Math.min(bytes - done, 64 << 20), done)).bytesRead
  const imageReadMs = performance.now() - started
  await handle.close()
  return { load, imageBytes: bytes, imageReadMs }
}

/**
 * Stops a service gracefully (SIGTERM), which lets --cpu-prof write its profiles; the main thread's
 * (thread id 0 in node's default name, CPU.date.time.pid.tid.seq) becomes `profiles/NAME.cpuprofile`.
 */
async function stopExplore (child: Child, graceMs: number): Promise<void> {
  await stopChild(child, graceMs)
  const profile = profiles.get(child)
  if (profile === undefined) return
  const main = (await readdir(profile.dir)).find(file => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(file))
  if (main !== undefined) await rename(join(profile.dir, main), join(RESULTS_DIR, 'profiles', `${profile.name}.cpuprofile`))
  await rm(profile.dir, { recursive: true, force: true })
}

interface Ceiling {
  child: Child
  port: number
  ready: Extract<CeilingMessage, { type: 'ready' }>
  setMode: (mode: 'hot' | 'cold') => Promise<void>
}

async function nextMessage (child: Child, timeoutMs: number): Promise<CeilingMessage> {
  return await new Promise<CeilingMessage>((resolve, reject) => {
    const timer = setTimeout(() => { finish(); reject(new Error(`${child.name}: no message within ${timeoutMs / 1000} s:\n${child.output()}`)) }, timeoutMs)
    const onMessage = (message: CeilingMessage): void => { finish(); resolve(message) }
    const onExit = (): void => { finish(); reject(new Error(`${child.name} exited:\n${child.output()}`)) }
    const finish = (): void => {
      clearTimeout(timer)
      child.process.off('message', onMessage)
      child.process.off('exit', onExit)
    }
    child.process.on('message', onMessage)
    child.process.once('exit', onExit)
  })
}

async function startCeiling (source: string, hotPaths: string[], cold: ColdSample): Promise<Ceiling> {
  const port = await freePort()
  const child = startChild('ceiling', ['--import', 'tsx', join(ROOT, 'bench', 'ceiling-server.ts')], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  try {
    const job: CeilingJob = { source, hotPaths, coldBody: cold.page, coldHeaders: cold.headers, requestHeaders: REQUEST_HEADERS, port }
    const answer = nextMessage(child, STARTUP_TIMEOUT_MS)
    child.process.send(job)
    const ready = await answer
    if (ready.type !== 'ready') throw new Error(`ceiling failed to start: ${ready.type === 'error' ? ready.message : ready.type}`)
    if (ready.failureCount > 0) {
      throw new Error(`the service did not answer 200 to ${ready.failureCount} hot paths, e.g. ${JSON.stringify(ready.failures.slice(0, 3))}`)
    }
    const setMode = async (mode: 'hot' | 'cold'): Promise<void> => {
      const ack = nextMessage(child, 10_000)
      child.process.send({ type: 'mode', mode } satisfies CeilingMessage)
      await ack
    }
    return { child, port, ready, setMode }
  } catch (error) {
    await stopChild(child)
    throw error
  }
}

// ---------------------------------------------------------------------------------------------------------
// One snapshot size.

interface ColdSample { meanBodyBytes: number, page: string, headers: Record<string, string> }

/**
 * Fetches a sample of cold pages from the service (from the warm-up list, so no measured page is seen
 * early): every one must be 200, non-empty and count what the generator said. Returns the mean body size
 * and a real page padded to exactly that size for the ceiling.
 */
async function sampleCold (base: string, workload: Workload, info: SnapshotInfo): Promise<ColdSample> {
  const counts = new Map(info.companies.map(c => [c.id, c.items]))
  const step = Math.max(1, Math.floor(workload.warmup.length / COLD_SAMPLE))
  const sample = workload.warmup.filter((_, i) => i % step === 0).slice(0, COLD_SAMPLE)
  const bodies: Array<{ body: Buffer, headers: Headers }> = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < sample.length) {
      const path = sample[next++] ?? '/'
      const answer = await get(`${base}${path}`, REQUEST_HEADERS)
      if (answer.status !== 200) throw new Error(`cold sample: ${path} answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 200)}`)
      const page = JSON.parse(answer.body.toString('utf8')) as { count: number, results: unknown[] }
      const match = /^\/([^/]+)\/.*companies=(\d+)/.exec(path)
      const expected = counts.get(Number(match?.[2]))?.[match?.[1] ?? ''] ?? -1
      if (page.count !== expected || page.results.length === 0) {
        throw new Error(`cold sample: ${path} has count ${page.count} and ${page.results.length} results; the generator says ${expected} items`)
      }
      bodies.push({ body: answer.body, headers: answer.headers })
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  const mean = bodies.reduce((n, b) => n + b.body.length, 0) / bodies.length
  const target = Math.round(mean)
  // The largest real page no bigger than the mean, padded with spaces inside the object: still valid JSON.
  const below = bodies.filter(b => b.body.length <= target).sort((a, b) => b.body.length - a.body.length)[0] ?? bodies[0]
  if (below === undefined) throw new Error('cold sample: no page fetched')
  const text = below.body.toString('utf8')
  const page = `${text.slice(0, -1)}${' '.repeat(Math.max(0, target - below.body.length))}}`
  return { meanBodyBytes: mean, page, headers: replayedHeaders(below.headers) }
}

/** The client main() chose (options.client is 'auto' only before that). */
const clientOf = (options: BenchOptions): ClientName => options.client === 'wrk' ? 'wrk' : 'autocannon'

function describe (name: string, s: Sample): string {
  const r = summarize([s])
  return `  ${name.padEnd(8)} ${Math.round(r.requestsPerSecond).toString().padStart(6)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  ` +
    `errors ${r.errors} non-2xx ${r.non2xx} timeouts ${r.timeouts}  cpu ${r.serverCores.toFixed(2)} (client ${r.clientCores.toFixed(2)}, other ${r.otherCores.toFixed(2)})`
}

/** A server under traffic: the service, the baseline or the ceiling. */
interface UnderLoad { name: string, port: number, pid: number }

/**
 * Warm-up of each server, then rounds of (service, baseline if any, ceiling) measured one after the other,
 * so slow drift of the machine hits them all alike, each round beginning with the next of them: here the
 * first of a round read 7–9% lower (ADR 044). A round disturbed by other processes is run again (up to
 * --attempts). Returns each target's samples, in the order given.
 */
async function runWorkload (workload: Workload, targets: readonly UnderLoad[], ceiling: Ceiling, options: BenchOptions): Promise<{ samples: Sample[][], pairsRun: number }> {
  const settings: LoadSettings = { client: clientOf(options), connections: options.connections, warmupSeconds: options.warmupSeconds, durationSeconds: options.durationSeconds }
  await ceiling.setMode(workload.name)
  await waitForQuiet(options)
  for (const target of targets) await warmUp(target.port, workload.warmup, settings)
  const samples: Sample[][] = targets.map(() => [])
  // Where each server is in the measured list: the next run goes on from there, so no cold page repeats.
  const cursors = targets.map(() => 0)
  let pairsRun = 0
  const disturbance = (round: readonly Sample[]): number => Math.max(...round.map(s => s.otherCores))
  for (let round = 1; round <= options.rounds; round++) {
    let best: Sample[] | undefined
    for (let attempt = 1; attempt <= options.attempts; attempt++) {
      if (round > 1 || attempt > 1) await waitForQuiet(options)
      pairsRun++
      log(`round ${round} of ${options.rounds}${attempt > 1 ? `, try ${attempt} of ${options.attempts}` : ''}`)
      const runs: Sample[] = []
      for (let k = 0; k < targets.length; k++) {
        const i = (k + round - 1) % targets.length
        const target = targets[i] as UnderLoad
        const s = await sample(target.port, target.pid, workload.measured, settings, cursors[i] ?? 0)
        cursors[i] = (cursors[i] ?? 0) + s.requests
        log(describe(target.name, s))
        runs[i] = s
      }
      if (best === undefined || disturbance(runs) < disturbance(best)) best = runs
      if (disturbance(runs) <= NOISY_CORES) break
      log(`other processes used ${disturbance(runs).toFixed(2)} cores during that round${attempt < options.attempts ? ': again' : ': keeping the least disturbed'}`)
    }
    best?.forEach((s, i) => samples[i]?.push(s))
  }
  return { samples, pairsRun }
}

/**
 * Time to a parsed document (bare) or a first answer (service) from the spawn, peak RSS, RSS after
 * `settleSeconds` idle, and RSS after a forced full GC (the settled figure; null if the inspector port was
 * taken). The process is stopped afterwards: the inspector a forced GC opens stays open.
 */
async function measureLoad (child: Child, ready: Promise<number>, options: BenchOptions): Promise<LoadMeasure> {
  try {
    const readyMs = await ready
    await sleep(options.settleSeconds * 1000)
    const idle = await memoryOf(child.pid)
    let gcRssBytes: number | null = null
    if (await forceGc(child.pid)) {
      // Freed pages leave RSS as the GC returns them; a moment lets that finish.
      await sleep(500)
      gcRssBytes = (await memoryOf(child.pid)).rssBytes
    }
    const { peakRssBytes } = await memoryOf(child.pid)
    return { readyMs, peakRssBytes, idleRssBytes: idle.rssBytes, gcRssBytes }
  } finally {
    await stopChild(child)
  }
}

const mbText = (bytes: number | null): string => bytes === null ? 'n/a' : `${(bytes / 1e6).toFixed(0)} MB`

const rate = (s: Sample): number => s.requests / s.seconds
/** a's req/s ÷ b's, pooled and for each round (the runs of a round were measured one after the other). */
function versus (a: Sample[], b: Sample[]): { ratio: number, roundRatios: number[] } {
  return {
    ratio: summarize(a).requestsPerSecond / summarize(b).requestsPerSecond,
    roundRatios: a.map((s, i) => rate(s) / (b[i] === undefined ? Number.NaN : rate(b[i])))
  }
}

/** A contender's traffic process. */
interface Serving { contender: Contender, child: Child, port: number, base: string }

async function benchSize (contenders: readonly Contender[], info: SnapshotInfo, options: BenchOptions): Promise<Omit<SizeResult, 'figures' | 'reloads'>> {
  const label = info.label
  await warmPageCache(info.file)

  // Load, one process at a time on a quiet machine, each in a process of its own that is then stopped.
  await waitForQuiet(options)
  // The floor in the snapshot's own format: one readFile + JSON.parse, or JSON.parse line by line.
  const [bareScript, bareName] = info.format === 'jsonl' ? ['bare-parse-lines.ts', 'line by line + JSON.parse'] : ['bare-parse.ts', 'readFile + JSON.parse']
  // Plain node on the script's JavaScript, as before it was TypeScript: no loader in the floor.
  const bareChild = startChild('bare parse', [await plainScript(join(ROOT, 'bench', bareScript), DATA_DIR), info.file])
  const bare = await measureLoad(bareChild, waitForOutput(bareChild, 'parsed', STARTUP_TIMEOUT_MS), options)
  log(`${label}: bare ${bareName} ${(bare.readyMs / 1000).toFixed(2)} s; RSS peak ${mbText(bare.peakRssBytes)}, ` +
    `idle ${mbText(bare.idleRssBytes)}, after GC ${mbText(bare.gcRssBytes)}`)
  const loads: LoadMeasure[] = []
  const restarts: RestartMeasure[] = []
  for (const contender of contenders) {
    await waitForQuiet(options)
    const loadPort = await freePort()
    const loading = await startExplore(contender, info, loadPort, { ...options, profile: false })
    const load = await measureLoad(loading, waitUntilAnswering(loading, `http://127.0.0.1:${loadPort}/-/readyz`, STARTUP_TIMEOUT_MS), options)
    log(`${label}: ${contender.name} first answer ${(load.readyMs / 1000).toFixed(2)} s; RSS peak ${mbText(load.peakRssBytes)}, ` +
      `idle ${mbText(load.idleRssBytes)}, after GC ${mbText(load.gcRssBytes)}`)
    loads.push(load)
    const restart = await measureRestart(contender, info, options)
    log(`${label}: ${contender.name} restarted, first answer ${(restart.load.readyMs / 1000).toFixed(2)} s; RSS peak ` +
      `${mbText(restart.load.peakRssBytes)}, after GC ${mbText(restart.load.gcRssBytes)}` +
      (restart.imageBytes === null ? ' (no image)' : `; its image ${mbText(restart.imageBytes)}, read alone in ${(restart.imageReadMs ?? 0).toFixed(0)} ms`))
    restarts.push(restart)
  }

  // Traffic, on fresh processes: the loads above have been measured, and their inspectors are open.
  const serving: Serving[] = []
  try {
    for (const contender of contenders) {
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const child = await startExplore(contender, info, port, options)
      serving.push({ contender, child, port, base })
      await waitUntilAnswering(child, `${base}/-/readyz`, STARTUP_TIMEOUT_MS)
      const status = JSON.parse((await get(`${base}/-/status`)).body.toString('utf8')) as { snapshot: { items: Record<string, number> } }
      if (JSON.stringify(status.snapshot.items) !== JSON.stringify(info.items)) {
        throw new Error(`the ${contender.name} serves ${JSON.stringify(status.snapshot.items)} items, the generator wrote ${JSON.stringify(info.items)}`)
      }
    }
    const [explore, baseline] = serving
    if (explore === undefined) throw new Error('no service to measure')

    const hot = hotWorkload(info.items, info.companies, options.hotPaths, options.seed)
    const cold = coldWorkload(info.companies, options.coldPaths, options.coldWarmupPaths, options.seed)
    const coldSample = await sampleCold(explore.base, cold, info)
    // The baseline is checked the same way, and so sees the same sampled pages before its warm-up.
    if (baseline !== undefined) await sampleCold(baseline.base, cold, info)
    const ceiling = await startCeiling(explore.base, hot.measured, coldSample)
    const results: Partial<Record<'hot' | 'cold', WorkloadResult>> = {}
    let afterTraffic: Memory[]
    try {
      const targets: UnderLoad[] = [
        ...serving.map(s => ({ name: s.contender.name, port: s.port, pid: s.child.pid })),
        { name: 'ceiling', port: ceiling.port, pid: ceiling.child.pid }
      ]
      for (const workload of [hot, cold]) {
        log(`${label} ${workload.name}: ${options.warmupSeconds} s warm-up of each server, then ${options.rounds} × ` +
          `(${targets.map(t => `${options.durationSeconds} s ${t.name}`).join(', ')}; the order turned each round)`)
        const { samples, pairsRun } = await runWorkload(workload, targets, ceiling, options)
        for (const s of serving) if (s.child.exitedYet()) throw new Error(`the ${s.contender.name} died under load:\n${s.child.output()}`)
        const served = samples[0] ?? []
        const ceilingRuns = samples[samples.length - 1] ?? []
        const e = summarize(served)
        const c = summarize(ceilingRuns)
        const { ratio, roundRatios } = versus(served, ceilingRuns)
        results[workload.name] = {
          explore: e,
          ceiling: c,
          ratio,
          roundRatios,
          meanBodyBytes: workload.name === 'hot' ? ceiling.ready.meanHotBytes : coldSample.meanBodyBytes,
          mix: workload.mix,
          pairsRun,
          ...(baseline === undefined ? {} : { baseline: { result: summarize(samples[1] ?? []), ...versus(served, samples[1] ?? []) } })
        }
      }
      await sleep(AFTER_TRAFFIC_SECONDS * 1000)
      afterTraffic = await Promise.all(serving.map(async s => await memoryOf(s.child.pid)))
    } finally {
      await stopChild(ceiling.child)
    }

    const [serviceLoad, baselineLoad] = loads
    const [serviceAfter, baselineAfter] = afterTraffic
    if (results.hot === undefined || results.cold === undefined || serviceLoad === undefined || serviceAfter === undefined) throw new Error('a workload did not run')
    return {
      label,
      format: info.format,
      totalItems: info.totalItems,
      items: info.items,
      companies: info.companies.length,
      file: info.file,
      fileBytes: info.bytes,
      load: {
        service: serviceLoad,
        serviceRestart: restarts[0],
        bare,
        exploreAfterTrafficRssBytes: serviceAfter.rssBytes,
        exploreAfterTrafficPeakRssBytes: serviceAfter.peakRssBytes,
        ...(baselineLoad === undefined || baselineAfter === undefined
          ? {}
          : { baseline: { load: baselineLoad, restart: restarts[1], afterTrafficRssBytes: baselineAfter.rssBytes, afterTrafficPeakRssBytes: baselineAfter.peakRssBytes } })
      },
      hot: results.hot,
      cold: results.cold
    }
  } finally {
    // SIGTERM: the servers close gracefully, which also lets --cpu-prof write their profiles.
    await Promise.all(serving.map(async s => await stopExplore(s.child, 15_000)))
  }
}

// ---------------------------------------------------------------------------------------------------------
// Reload under load: the snapshot replaced while the hot paths are served.

/** A gauge's value from a Prometheus text exposition, or null when absent. */
function gauge (text: string, name: string): number | null {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)
  return match === null ? null : Number(match[1])
}

/**
 * A lag gauge in seconds, as milliseconds, or null when absent: the serving threads' where there are any
 * (WORKERS > 1: the loops that answer, not the control thread that loads), else the process's.
 */
function lagOf (text: string, name: string): number | null {
  const seconds = gauge(text, name.replace('explore_nodejs_', 'explore_serving_')) ?? gauge(text, name)
  return seconds === null ? null : seconds * 1000
}

/**
 * Resets the process's VmHWM to its current RSS (Linux: "5" into /proc/PID/clear_refs), so the peak read
 * afterwards is the reload's, not the first load's. False where the kernel refuses.
 */
async function resetPeakRss (pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** What one workload under load does to the service, and how its end is seen in /-/status. */
interface Disturbance {
  name: string
  /** Made ready before the service starts (written and flushed: only `act` falls inside the window). */
  prepare: (dir: string, served: string) => Promise<void>
  /** The change, at `reloadAtSeconds` into the window. */
  act: (dir: string, served: string) => Promise<void>
  /** What /-/status counts: the workload is over once `done` exceeds its value before the change. */
  counts: (status: StatusCounts) => { done: number, failed: number }
  /** Flags after the bench's own, for this workload's service. */
  flags?: string[]
  /** The load's connections, when not the bench's --connections. */
  connections?: number
}

interface StatusCounts { reloads: { succeeded: number, failed: number, changeFiles?: { applied: number, refused: number } } }

/** What every workload under load measures (ReloadResult's fields). */
type UnderLoadResult = Omit<ReloadResult, 'contender'>

/**
 * A fresh service (`--watch true`, after any --service-args) on a hard link to the snapshot in a directory
 * of its own, warmed up on the hot paths; then `reloadWindowSeconds` of hot load, `reloadAtSeconds` into which
 * the workload acts. Latencies over the window; the event-loop lag from just before the act to the end of
 * both the window and the work; the time from the act to /-/status counting it.
 */
async function underLoad (contender: Contender, info: SnapshotInfo, options: BenchOptions, workload: Disturbance): Promise<{ result: UnderLoadResult, output: string }> {
  const label = `${info.label} ${workload.name}`
  await rm(RELOAD_DIR, { recursive: true, force: true })
  await mkdir(RELOAD_DIR, { recursive: true })
  const served = join(RELOAD_DIR, `snapshot.${info.format}`)
  try {
    // A link, not a copy: a rename replaces the link's name, and the cached snapshot stays as it was.
    await link(info.file, served)
    await workload.prepare(RELOAD_DIR, served)
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const child = await startExplore(contender, info, port, options, { file: served, last: ['--watch', 'true', ...workload.flags ?? []], workload: 'reload' })
    const counted = async (): Promise<{ done: number, failed: number }> => workload.counts(JSON.parse((await get(`${base}/-/status`)).body.toString('utf8')) as StatusCounts)
    try {
      await waitUntilAnswering(child, `${base}/-/readyz`, STARTUP_TIMEOUT_MS)
      const hot = hotWorkload(info.items, info.companies, options.hotPaths, options.seed)
      const settings: LoadSettings = { client: clientOf(options), connections: workload.connections ?? options.connections, warmupSeconds: options.warmupSeconds, durationSeconds: options.reloadWindowSeconds, ...(options.loadRate === undefined ? {} : { rate: options.loadRate }) }
      await waitForQuiet(options)
      log(`${label}: ${options.warmupSeconds} s warm-up, then ${options.reloadWindowSeconds} s of hot load (${settings.connections} connections${options.loadRate === undefined ? '' : `, ${options.loadRate} req/s`}), the change at ${options.reloadAtSeconds} s`)
      await warmUp(port, hot.warmup, settings)
      // prom-client's lag histogram runs from the last scrape: from here, the window's load alone (the first
      // load and the warm-up are not the control's).
      await get(`${base}/-/metrics`)
      const before = await counted()
      const rssBeforeBytes = (await memoryOf(child.pid)).rssBytes
      const peakFromWindow = await resetPeakRss(child.pid)
      const window = sample(port, child.pid, hot.measured, settings)
      await sleep(options.reloadAtSeconds * 1000)
      // prom-client resets the lag histogram at each scrape: this one ends the seconds of load alone (the
      // control) and starts the change's.
      const lagBefore = lagOf((await get(`${base}/-/metrics`)).body.toString('utf8'), 'explore_nodejs_eventloop_lag_max_seconds')
      const actedAt = performance.now()
      await workload.act(RELOAD_DIR, served)
      // Polled while the load goes on: the status request waits its turn like any other.
      let reloadMs: number | null = null
      let lagUntilCounted: number | null = null
      const deadline = actedAt + STARTUP_TIMEOUT_MS
      while (performance.now() < deadline) {
        const now = await counted()
        if (now.failed > before.failed) throw new Error(`the ${workload.name} failed:\n${child.output()}`)
        if (now.done > before.done) {
          reloadMs = performance.now() - actedAt
          // The stall while the work ran (up to one poll after it).
          lagUntilCounted = lagOf((await get(`${base}/-/metrics`)).body.toString('utf8'), 'explore_nodejs_eventloop_lag_max_seconds')
          break
        }
        await sleep(10)
      }
      const s = await window
      // Read after both the window and the work: the lag over all of it, freeing the old model included.
      const metrics = (await get(`${base}/-/metrics`)).body.toString('utf8')
      const lag = (name: string): number | null => lagOf(metrics, name)
      const lagAfter = lag('explore_nodejs_eventloop_lag_max_seconds')
      const { peakRssBytes, rssBytes } = await memoryOf(child.pid)
      if (child.exitedYet()) throw new Error(`the service died during the ${workload.name}:\n${child.output()}`)
      const result: UnderLoadResult = {
        windowSeconds: options.reloadWindowSeconds,
        reloadAtSeconds: options.reloadAtSeconds,
        load: summarize([s]),
        reloadMs,
        // From the rename to the end of the window, as ever: the scrape when it was counted split it in two.
        lagMaxMs: lagUntilCounted === null ? lagAfter : lagAfter === null ? lagUntilCounted : Math.max(lagUntilCounted, lagAfter),
        // From the count to the window's end: none when the work outlasted the window (the scrape then reads
        // the idle moments after the load stopped).
        lagP99Ms: reloadMs === null || outlastedWindow(reloadMs, options.reloadWindowSeconds, options.reloadAtSeconds) ? null : lag('explore_nodejs_eventloop_lag_p99_seconds'),
        lagMaxUntilCountedMs: lagUntilCounted,
        lagMaxBeforeMs: lagBefore,
        rssBeforeBytes,
        peakRssBytes,
        peakFromWindow,
        rssAfterBytes: rssBytes
      }
      log(`${describe(workload.name, s)}`)
      log(`${label}: counted ${reloadMs === null ? 'never' : `after ${(reloadMs / 1000).toFixed(3)} s`}; event-loop lag max ` +
        `${lagBefore?.toFixed(0) ?? 'n/a'} ms before it, ${lagUntilCounted?.toFixed(0) ?? 'n/a'} ms until counted, ${lagAfter?.toFixed(0) ?? 'n/a'} ms after it to the window's end (p99 after it ${result.lagP99Ms?.toFixed(0) ?? 'n/a'} ms); RSS ${mbText(rssBeforeBytes)} before, ` +
        `peak ${mbText(peakRssBytes)}${peakFromWindow ? '' : ' (since start)'}, ${mbText(rssBytes)} after`)
      return { result, output: child.output() }
    } finally {
      await stopExplore(child, 15_000)
    }
  } finally {
    await rm(RELOAD_DIR, { recursive: true, force: true })
  }
}

/**
 * The snapshot replaced: a copy of the file one newline longer (the same items, a different file) renamed
 * over the link. The rename, not SIGHUP, because that is how a snapshot is published (docs/guides/editing-snapshots.md): the watcher's
 * debounce is part of the reload time measured. The service's, and the baseline's with --reload-baseline
 * (off by default: a baseline may predate JSON Lines or the watcher).
 */
async function reloadUnderLoad (contender: Contender, info: SnapshotInfo, options: BenchOptions): Promise<ReloadResult> {
  const next = (dir: string): string => join(dir, `.next.${info.format}`)
  const { result } = await underLoad(contender, info, options, {
    name: 'reload',
    prepare: async dir => {
      // A trailing newline is whitespace after a JSON document and a blank line in JSON Lines: valid either way.
      await copyFile(info.file, next(dir))
      await appendFile(next(dir), '\n')
      await flushed(next(dir))
    },
    act: async (dir, served) => { await rename(next(dir), served) },
    counts: status => ({ done: status.reloads.succeeded, failed: status.reloads.failed })
  })
  return result
}

/**
 * A change file dropped into the snapshot's change directory: CHANGE_UPSERTS items of the
 * snapshot edited and CHANGE_DELETES deleted, written beside it and renamed in, as an editor's save lands.
 * Timed from the rename to /-/status counting it applied (the watcher's debounce included). JSON Lines
 * snapshots only: their first lines are the items, no parse of the whole file needed.
 */
async function changesUnderLoad (contender: Contender, info: SnapshotInfo, options: BenchOptions, connections: number): Promise<ChangesResult> {
  const staged = (dir: string): string => join(dir, '.change.jsonl')
  let changeBytes = 0
  const { result, output } = await underLoad(contender, info, options, {
    name: `change file (${connections} connections)`,
    connections,
    // The service's own account of the work, after the debounce: its "change file applied" line (info).
    flags: ['--log-level', 'info', '--request-log', 'false'],
    prepare: async (dir, served) => {
      // The directory exists before the start: the service expects change files and makes ready for them.
      await mkdir(`${served}.changes`)
      changeBytes = await writeChangeFile(info.file, staged(dir))
    },
    act: async (_dir, served) => { await rename(staged(RELOAD_DIR), join(`${served}.changes`, '0001-bench.jsonl')) },
    counts: status => ({ done: status.reloads.changeFiles?.applied ?? 0, failed: status.reloads.changeFiles?.refused ?? 0 })
  })
  const appliedMs = loggedMs(output, 'change file applied')
  log(`${info.label} change file (${connections} connections): applied in ${appliedMs === null ? 'n/a' : `${appliedMs} ms`} by the service's log (from the debounce's end)`)
  return { ...result, appliedMs, changeBytes, upserts: CHANGE_UPSERTS, deletes: CHANGE_DELETES, connections }
}

/**
 * The change-file memory goal (BENCHMARKS.md), read settled and without requests (the window's RSS under load moves by tens of
 * MB): undefined when it could not be read (the run's other figures stand; the report says "not measured").
 */
async function settledChangeMemory (contender: Contender, info: SnapshotInfo, options: BenchOptions): Promise<ChangesResult['settled']> {
  await waitForQuiet(options)
  log(`${info.label} change file: settled memory, no requests (six files, readings 20 s apart)`)
  try {
    // Six, judged by the rise per file over them: single files scatter with the steps in which V8's heap and
    // malloc's arenas grow, and the first or second after a start also pays, once, for V8 first optimizing
    // the change path (docs/decisions/026).
    const memory = await changeMemory(contender.root, info.file, { files: 6, nodeArgs: options.nodeArgs, serviceArgs: contender.args, log })
    const settled = { fileBytes: memory.fileBytes, beforeBytes: memory.before.rssBytes, afterBytes: memory.after.map(reading => reading.rssBytes) }
    log(`${info.label} change file: settled RSS ${settledRises(settled)}`)
    return settled
  } catch (error) {
    log(`${info.label} change file: settled memory not measured: ${(error as Error).message}`)
    return undefined
  }
}

/**
 * The change workload: under the bench's load, then under a steady one (STEADY_CONNECTIONS), then its
 * memory settled (not with --quick), which the first result carries.
 */
async function changeWorkloads (contender: Contender, info: SnapshotInfo, options: BenchOptions): Promise<ChangesResult[]> {
  const results = [await changesUnderLoad(contender, info, options, options.connections)]
  if (options.connections !== STEADY_CONNECTIONS) results.push(await changesUnderLoad(contender, info, options, STEADY_CONNECTIONS))
  if (options.quick) return results
  const settled = await settledChangeMemory(contender, info, options)
  return settled === undefined ? results : [{ ...results[0] as ChangesResult, settled }, ...results.slice(1)]
}

/** The `ms` of the last log line (pino JSON) whose msg is `message`, or null. */
function loggedMs (output: string, message: string): number | null {
  const ms = logEntries(output, message).at(-1)?.ms
  return typeof ms === 'number' ? ms : null
}

// ---------------------------------------------------------------------------------------------------------

/** An argument as a shell would need it, so the recorded command runs again as it is (--service-args "…"). */
const shellQuoted = (arg: string): string => /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`

async function main (): Promise<void> {
  const argv = process.argv.slice(2)
  let options: ReturnType<typeof readOptions>
  try {
    options = readOptions(argv, process.env)
  } catch (error) {
    // A wrong option is the user's to fix: its message, no stack trace.
    console.error(`bench: ${(error as Error).message}\nRun with --help for the options.`)
    process.exitCode = 2
    return
  }
  if (options === 'help') {
    console.log(USAGE)
    return
  }
  const wrk = wrkVersion()
  if (options.client === 'wrk' && wrk === null) {
    console.error('bench: --client wrk, and wrk is not on PATH (Debian: apt-get install wrk)')
    process.exitCode = 2
    return
  }
  options = { ...options, client: options.client === 'autocannon' || wrk === null ? 'autocannon' : 'wrk' }
  const client = options.client === 'wrk' ? wrk ?? 'wrk' : `autocannon ${AUTOCANNON_VERSION}`
  log(`load client: ${client}${options.loadRate === undefined ? '' : ` (autocannon for the ${options.loadRate} req/s of the reload and change-file workloads)`}`)
  const startedAt = new Date().toISOString()
  await mkdir(DATA_DIR, { recursive: true })
  await mkdir(RESULTS_DIR, { recursive: true })
  await lock()
  const service: Contender = { name: 'service', root: resolve(options.serviceDir ?? ROOT), args: options.serviceArgs }
  // Only --baseline-args: the service's own checkout under other flags.
  const contenders = options.baseline === undefined
    ? [service]
    : [service, { name: 'baseline', root: resolve(options.baseline.dir ?? service.root), args: options.baseline.args } satisfies Contender]
  for (const root of new Set(contenders.map(c => c.root))) await ensureBuild(root)
  if (contenders.some(c => c.args.length > 0 || c.name === 'baseline')) {
    for (const c of contenders) log(`${c.name}: ${c.root}/dist/server.js ${c.args.join(' ')}`)
  }
  const busyCoresBefore = await busyCores(3000)
  if (busyCoresBefore > 0.15) log(`warning: the machine is busy (${busyCoresBefore.toFixed(2)} cores in use by other processes): figures will be disturbed`)

  const sizes: SizeResult[] = []
  for (const total of options.sizes) {
    const info = await ensureSnapshot(ROOT, DATA_DIR, total, options.seed, formatFor(total, options.format))
    log(`${info.label}: ${info.file} (${info.format === 'jsonl' ? 'JSON Lines' : 'JSON'}, ${(info.bytes / 1e6).toFixed(1)} MB, ${info.totalItems} items, ${info.companies.length} companies` +
      `${info.generatedSeconds === null ? ', cached' : `, generated in ${info.generatedSeconds.toFixed(1)} s`})`)
    const result = await benchSize(contenders, info, options)
    // After benchSize has stopped its servers: the reload's process runs alone.
    if (options.reloadWindowSeconds > 0) {
      const reloads: ReloadResult[] = []
      const reloading = options.reloadBaseline ? contenders : [service]
      for (let round = 0; round < options.reloadRounds; round++) {
        for (const contender of reloading) reloads.push({ contender: contender.name === 'baseline' ? 'baseline' : 'service', ...await reloadUnderLoad(contender, info, options) })
      }
      // Change files (BENCHMARKS.md's change-file goals): on JSON Lines snapshots, the service only (a baseline may predate them).
      const changes = info.format === 'jsonl' ? await changeWorkloads(service, info, options) : undefined
      sizes.push({ ...result, reloads, ...(changes === undefined ? {} : { changes }), figures: sizeFigures({ ...result, reloads }) })
    } else sizes.push({ ...result, figures: sizeFigures(result) })
    // The fleet's: on the largest size, every other workload's servers stopped (two replicas, moto and nginx).
    if (options.fleet && total === options.sizes[options.sizes.length - 1]) {
      const missing = info.format !== 'jsonl'
        ? 'the fleet workload publishes a change file made from a JSON Lines snapshot (--format jsonl)'
        : fleetMissing()
      if (missing !== null) log(`${info.label} fleet: not run: ${missing}`);
      (sizes[sizes.length - 1] as SizeResult).fleet = missing ?? await fleetChange(service.root, info, join(DATA_DIR, 'fleet'), options.fleetPollSeconds, log)
    }
    // From a million items: each memory trick off in turn, each in a process of its own, nothing else running.
    if (info.totalItems >= MEMORY_POLICY_FROM_ITEMS && !options.quick) {
      (sizes[sizes.length - 1] as SizeResult).memoryPolicy = runMemoryPolicy(info.file, log)
    }
  }

  const result: BenchResult = {
    resultsVersion: RESULTS_VERSION,
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machine(),
    service: buildOf(service),
    ...(contenders[1] === undefined ? {} : { baseline: buildOf(contenders[1]) }),
    busyCoresBefore,
    client,
    command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv.map(shellQuoted)] : [])].join(' '),
    options,
    sizes,
    targets: checkTargets(sizes)
  }
  const text = markdown(result)
  // A --quick run is a smoke run or a quick A/B: it never replaces the results BENCHMARKS.md's table is made from.
  const name = options.quick ? 'quick' : 'latest'
  await writeFile(join(RESULTS_DIR, `${name}.md`), text)
  await writeFile(join(RESULTS_DIR, `${name}.json`), JSON.stringify(result, null, 2) + '\n')
  process.stdout.write(`\n${text}\nWritten to bench/results/${name}.md and ${name}.json\n`)
}

// Whatever happens, no server is left behind.
process.once('exit', killAllNow)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the servers`)
    stopAll().finally(() => process.exit(130)).catch(() => {})
  })
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.stack ?? error.message : error)
  await stopAll()
  process.exitCode = 1
})
