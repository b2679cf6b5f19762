// The change-file memory goal ("memory after applying it: at most settled + 3× the change file's size"), read
// settled: a service with the settled probe loaded (settled-probe.ts) and no requests; its RSS after full
// collections and V8's memory reducer before a change file of the bench's shape and after each of `files`
// such files (each the next items of the snapshot). Run by `npm run bench` on JSON Lines sizes (run.ts) and by
// bench/experiments/change-settled.ts with more knobs. The change workload under load (run.ts) reads RSS
// unsettled, which moves by tens of MB either way: this is the reading the goal is judged by.
import { EventEmitter, once } from 'node:events'
import { link, mkdir, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { setTimeout as pause } from 'node:timers/promises'
import autocannon from 'autocannon'
import { CHANGE_DELETES, CHANGE_UPSERTS, writeChangeFile } from './change-file.js'
import { plainScript } from './plain-script.js'
import { childEnv, freePort, get, startChild, stopChild, waitUntilAnswering, type Child } from './processes.js'

/** One reading of the probe: the service's memory once collected, at that moment. */
export interface SettledReading {
  rssBytes: number
  arrayBuffersBytes: number
  heapUsedBytes: number
  heapTotalBytes: number
  v8MallocedBytes: number
  v8PeakMallocedBytes: number
  /** Resident bytes by kind of mapping (settled-probe.ts). */
  regions: Record<string, number>
}

export interface ChangeMemoryOptions {
  /** Change files applied one after another. */
  files: number
  upserts?: number
  deletes?: number
  /**
   * Seconds between readings. V8's memory reducer compacts the old generation and lets go of the young
   * generation's pooled pages once allocation has been quiet some 8 s after a full collection, and each
   * forced collection starts that wait again: readings 3 s apart never saw it (one first change read +8.2 MB
   * that way, +0.3 MB 20 s later; docs/decisions/026).
   */
  quietSeconds?: number
  /** Pages served under load for this long before the first reading (0: none). */
  serveSeconds?: number
  /** More readings, these many seconds after the last file, one after another. */
  lateSeconds?: readonly number[]
  /** node's flags for the service. */
  nodeArgs?: readonly string[]
  /** The service's own flags (the bench's `--service-args`), before the flags this reading needs (the last of a repeated flag wins). */
  serviceArgs?: readonly string[]
  /** Each line of the probe's output that is not a reading (SPACES=1's). */
  onProbeLine?: (line: string) => void
  log?: (line: string) => void
}

export interface ChangeMemoryResult {
  /** Each change file's size. */
  fileBytes: number[]
  /** Before the first file. */
  before: SettledReading
  /** After each file. */
  after: SettledReading[]
  /** After `lateSeconds`, in order. */
  late: SettledReading[]
}

/** The settled reading's cadence and limits. */
const READING_TIMEOUT_MS = 30_000
const STEADY_WITHIN_BYTES = 2e6
const STEADY_MAX_READINGS = 20

export async function changeMemory (checkout: string, snapshot: string, options: ChangeMemoryOptions): Promise<ChangeMemoryResult> {
  const { files, upserts = CHANGE_UPSERTS, deletes = CHANGE_DELETES, quietSeconds = 20, serveSeconds = 0, lateSeconds = [], nodeArgs = [], serviceArgs = [] } = options
  const log = options.log ?? ((): void => {})
  const readings = new EventEmitter<{ reading: [SettledReading] }>()
  // Beside the snapshot, so that it can be hard-linked in (one file system); one name, emptied first, so that
  // a run stopped by ^C (whose finally does not run) leaves nothing behind for long (its state/ keeps a copy).
  const work = join(dirname(snapshot), '.change-memory')
  await rm(work, { recursive: true, force: true })
  await mkdir(work)
  const served = join(work, 'snapshot.jsonl')
  const staged = Array.from({ length: files }, (_, i) => join(work, `.change-${i + 1}.jsonl`))
  let child: Child | undefined

  /** Asks the probe for a settled reading (SIGWINCH) and waits for its line; null from `next` when it timed out. */
  const settled = async (service: Child): Promise<SettledReading> => {
    const stop = new AbortController()
    const timer = setTimeout(() => { stop.abort() }, READING_TIMEOUT_MS)
    const next = once(readings, 'reading', { signal: stop.signal }).then(([reading]) => reading as SettledReading, () => null)
    service.process.kill('SIGWINCH')
    try {
      const reading = await Promise.race([next, service.exited.then(() => null)])
      if (reading !== null) return reading
      throw new Error(`${service.exitedYet() ? 'the service exited' : `no settled reading within ${READING_TIMEOUT_MS / 1000} s`}:\n${service.output()}`)
    } finally {
      clearTimeout(timer)
      stop.abort()
    }
  }
  /** Readings `quietSeconds` apart until two in a row are within 2 MB. */
  const steady = async (service: Child): Promise<SettledReading> => {
    let last = await settled(service)
    for (let i = 0; i < STEADY_MAX_READINGS; i++) {
      await pause(quietSeconds * 1000)
      const next = await settled(service)
      if (Math.abs(next.rssBytes - last.rssBytes) < STEADY_WITHIN_BYTES) return next
      last = next
    }
    throw new Error(`RSS did not settle within ${STEADY_MAX_READINGS} readings`)
  }

  try {
    const probe = await plainScript(join(import.meta.dirname, 'settled-probe.ts'), join(import.meta.dirname, '.data'))
    await link(snapshot, served)
    // The directory exists before the start: the service expects change files and makes ready for them.
    await mkdir(`${served}.changes`)
    const fileBytes: number[] = []
    for (const [i, file] of staged.entries()) fileBytes.push(await writeChangeFile(snapshot, file, `bench-${String(i + 1).padStart(4, '0')}`, (upserts + deletes) * i, upserts, deletes))
    const port = await freePort()
    child = startChild('service', [...nodeArgs, '--expose-gc', '--import', probe, join(checkout, 'dist', 'server.js'), ...serviceArgs, '--snapshot-path', served, '--port', String(port), '--watch', 'true', '--log-level', 'info', '--request-log', 'false'],
      { env: { ...childEnv(), STATE_DIR: join(work, 'state') } })
    let pending = ''
    child.process.stderr?.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        if (line.startsWith('SETTLED ')) readings.emit('reading', JSON.parse(line.slice('SETTLED '.length)) as SettledReading)
        else if (line.startsWith('SPACES ')) options.onProbeLine?.(line)
      }
    })
    const base = `http://127.0.0.1:${port}`
    await waitUntilAnswering(child, `${base}/-/readyz`, 600_000, 100)
    if (serveSeconds > 0) {
      // A replica serves pages before its first change: 400 pages (three languages' offsets, the largest
      // companies of the bench's snapshots), 8 connections.
      const requests = Array.from({ length: 400 }, (_, i) => ({ method: 'GET' as const, path: `/${['en', 'es', 'fr'][i % 3] as string}/api/internal/explore/?limit=20&offset=${(i * 37) % 2000}${i % 2 === 0 ? `&companies=${[7431, 319, 11205, 8090][i % 4] as number}` : ''}` }))
      const load = await autocannon({ url: base, connections: 8, duration: serveSeconds, requests })
      log(`served ${load.requests.total} requests in ${serveSeconds} s before the first reading (non-2xx: ${load.non2xx})`)
    }
    // Once the listing is made ready for change files (slices after the load, ADR 026) and the parse pool's
    // threads have exited (idle for 30 s, ADR 022): each thread's heap is ~50 MB of RSS.
    await pause(35_000)
    const before = await steady(child)
    const after: SettledReading[] = []
    for (const [i, file] of staged.entries()) {
      await rename(file, join(`${served}.changes`, `${String(i + 1).padStart(4, '0')}-bench.jsonl`))
      await applied(child, base, i + 1)
      after.push(await steady(child))
    }
    const late: SettledReading[] = []
    for (const seconds of lateSeconds) {
      await pause(seconds * 1000)
      late.push(await settled(child))
    }
    return { fileBytes, before, after, late }
  } finally {
    if (child !== undefined) await stopChild(child)
    await rm(work, { recursive: true, force: true })
  }
}

/** Waits for /-/status to count `count` change files applied; a refused one (or a dead service) is an error. */
async function applied (child: Child, base: string, count: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (child.exitedYet()) throw new Error(`the service exited:\n${child.output()}`)
    const status = JSON.parse((await get(`${base}/-/status`)).body.toString('utf8')) as { reloads: { changeFiles?: { applied: number, refused: number } } }
    const files = status.reloads.changeFiles
    if ((files?.refused ?? 0) > 0) throw new Error(`the change file was refused:\n${child.output()}`)
    if ((files?.applied ?? 0) >= count) return
    await pause(100)
  }
  throw new Error(`the change file was not applied within 120 s:\n${child.output()}`)
}
