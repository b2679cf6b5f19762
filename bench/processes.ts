// Child processes of the benchmark (service, ceiling, bare parse): start, watch, measure from /proc, and
// always stop, also when the run fails or is interrupted.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { OPTIONS } from '../src/config.js'

export interface Child {
  name: string
  process: ChildProcess
  pid: number
  /** performance.now() just before the spawn. */
  startedAt: number
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>
  exitedYet: () => boolean
  /** The last few KB of its stdout and stderr, for error messages. */
  output: () => string
}

const running = new Set<Child>()
const OUTPUT_KEEP = 16_384

// Configuration the service would read from the environment: removed, so only our flags decide (every
// variable the service's config reads: a WORKERS or SNAPSHOT_URL left in the shell would change what is
// measured). NODE_OPTIONS too, so tsx's loader (the bench itself runs under tsx) never reaches the plain
// `node` children.
const SCRUBBED = [...OPTIONS.map(option => option.env), 'NODE_OPTIONS']

export function childEnv (): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const name of SCRUBBED) delete env[name]
  return env
}

/** `command` is node itself unless given (moto_server, nginx: the fleet workload's). */
export function startChild (name: string, args: string[], options: SpawnOptions = {}, command = process.execPath): Child {
  let output = ''
  const keep = (chunk: Buffer): void => { output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEEP) }
  const startedAt = performance.now()
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(), ...options })
  if (child.pid === undefined) throw new Error(`${name}: could not start ${args.join(' ')}`)
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  let done = false
  const exited = new Promise<number | string>(resolve => {
    child.once('exit', (code, signal) => { done = true; resolve(code ?? signal ?? 'unknown') })
  })
  const handle: Child = { name, process: child, pid: child.pid, startedAt, exited, exitedYet: () => done, output: () => output }
  running.add(handle)
  exited.then(() => running.delete(handle), () => {})
  return handle
}

/** The built service for an experiment: one thread, the file not watched, a state of its own, its log on stderr only. */
export function startService (
  entry: string, { snapshot, port, stateDir, env = {} }: { snapshot: string, port: number, stateDir: string, env?: NodeJS.ProcessEnv }
): Child {
  return startChild('service', [entry], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      SNAPSHOT_PATH: snapshot,
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKERS: '1',
      WATCH: 'false',
      STATE_DIR: stateDir,
      ...env
    }
  })
}

/** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stopChild (child: Child, graceMs = 5000): Promise<void> {
  if (child.exitedYet()) return
  child.process.kill('SIGTERM')
  // Unreferenced: a child that stops at once must not keep the benchmark waiting for this timer.
  const timer = sleep(graceMs, undefined, { ref: false }).then(() => 'late' as const)
  if (await Promise.race([child.exited, timer]) === 'late' && !child.exitedYet()) {
    child.process.kill('SIGKILL')
    await child.exited
  }
}

export async function stopAll (): Promise<void> {
  await Promise.all([...running].map(async child => await stopChild(child)))
}

/** Synchronous last resort for process exit: no time for a graceful stop. */
export function killAllNow (): void {
  for (const child of running) if (!child.exitedYet()) child.process.kill('SIGKILL')
}

/**
 * Resolves with the milliseconds from the spawn when the child first prints `text` on stdout (or stderr); at
 * once if it already has (within the output kept), with the milliseconds until now.
 */
export async function waitForOutput (child: Child, text: string, timeoutMs: number, stream: 'stdout' | 'stderr' = 'stdout'): Promise<number> {
  const stdout = child.process[stream]
  if (stdout === null) throw new Error(`${child.name} has no ${stream} pipe`)
  if (child.output().includes(text)) return performance.now() - child.startedAt
  return await new Promise<number>((resolve, reject) => {
    let seen = ''
    const timer = setTimeout(() => { finish(); reject(new Error(`${child.name} printed no "${text}" within ${timeoutMs / 1000} s:\n${child.output()}`)) }, timeoutMs)
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8')
      if (seen.includes(text)) { finish(); resolve(performance.now() - child.startedAt) }
    }
    const onExit = (): void => { finish(); reject(new Error(`${child.name} exited before printing "${text}":\n${child.output()}`)) }
    const finish = (): void => {
      clearTimeout(timer)
      stdout.off('data', onData)
      child.process.off('exit', onExit)
    }
    stdout.on('data', onData)
    child.process.once('exit', onExit)
  })
}

/** The service's log lines (pino JSON, one a line) in `text` whose `msg` is `message`, parsed; others skipped. */
export function logEntries (text: string, message: string): Array<Record<string, unknown>> {
  const entries: Array<Record<string, unknown>> = []
  for (const line of text.split('\n')) {
    if (!line.includes(`"msg":${JSON.stringify(message)}`)) continue
    try {
      entries.push(JSON.parse(line) as Record<string, unknown>)
    } catch {}
  }
  return entries
}

/** A port free right now on 127.0.0.1 (the service needs a number up front: it logs nothing at warn). */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  await new Promise<void>(resolve => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no TCP port')
  return address.port
}

export interface Memory {
  /** VmRSS: resident now. */
  rssBytes: number
  /** VmHWM: the resident high-water mark since the process started. */
  peakRssBytes: number
}

export async function memoryOf (pid: number): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
    if (match === null) throw new Error(`/proc/${pid}/status has no ${field}`)
    return Number(match[1]) * 1024
  }
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') }
}

const CLOCK_TICKS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })
  const ticks = Number(result.stdout?.trim())
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100
})()

/** CPU seconds (user + system, every thread) the process has used so far. */
export async function cpuSecondsOf (pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** CPU seconds of this process's children that have ended and been waited for (a wrk run's, once it exits). */
export async function childrenCpuSeconds (): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS
}

/** Busy and total CPU seconds of the whole machine so far (every core), from /proc/stat. */
export async function machineCpuSeconds (): Promise<{ busy: number, total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? ''
  // cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
  const total = ticks.reduce((a, b) => a + b, 0)
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0)
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS }
}

export interface Answer {
  status: number
  body: Buffer
  headers: Headers
}

export async function get (url: string, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<Answer> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) })
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()), headers: response.headers }
}

/**
 * Polls `url` until it answers 200; returns the milliseconds from the child's spawn. Fails early when the
 * child exits, with what it printed.
 */
export async function waitUntilAnswering (child: Child, url: string, timeoutMs: number, intervalMs = 20): Promise<number> {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    if (child.exitedYet()) throw new Error(`${child.name} exited (${String(await child.exited)}) before answering:\n${child.output()}`)
    try {
      const answer = await get(url, {}, 2000)
      if (answer.status === 200) return performance.now() - child.startedAt
    } catch {
      // Not listening yet.
    }
    await sleep(intervalMs)
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs / 1000} s:\n${child.output()}`)
}
