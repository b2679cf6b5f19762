// Issue 23's memory goal ("settled + 3× the change file's size") read settled: the service's RSS with no
// requests, after full collections and V8's memory reducer (a reading is two in a row within 2 MB, taken
// QUIET_SECONDS apart: see `steady`), before a change file of the bench's shape (1,000 upserts, 100 deletes)
// and after it is applied; then the next files of the same shape (each the next 1,100 items). The bench's
// change workload reads RSS under load and unsettled, which moves by tens of MB either way.
//   npx tsx bench/experiments/change-settled.ts [CHECKOUT] [SNAPSHOT]
// CHECKOUT: a built checkout (default this one); SNAPSHOT: a JSON Lines file (the change files are made from
// it), default the bench's 1M one. Knobs, from the environment:
//   FILES=n            change files applied one after another (default 2); from 3, the slope of settled RSS
//                      per file after the first is printed, which averages out the readings' scatter
//   UPSERTS=n DELETES=n  another shape of file (a one-item file shows what any first change costs)
//   QUIET_SECONDS=n    seconds between readings (default 20: V8's memory reducer's wait, `steady`)
//   SERVE_SECONDS=n    pages served under load for n seconds before the first reading (default 0)
//   LATE_SECONDS=a,b   more readings a, then b, seconds after the last file
//   NODE_ARGS="…"      node's flags for the service (e.g. --max-semi-space-size=1)
// The probe (settled-probe.ts) also takes SPACES=1 (V8's spaces, each reading) and SMAPS_OUT=PREFIX (a copy of
// /proc/PID/smaps at each reading, PREFIX-1, PREFIX-2, …), passed through to the service.
import { link, mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { setTimeout as pause } from 'node:timers/promises'
import autocannon from 'autocannon'
import { CHANGE_DELETES, CHANGE_UPSERTS, writeChangeFile } from '../change-file.js'
import { plainScript } from '../plain-script.js'
import { experimentSnapshot } from '../snapshots.js'
import { childEnv, freePort, get, startChild, stopChild, waitUntilAnswering, type Child } from '../processes.js'

const [checkoutArg, snapshotArg] = process.argv.slice(2)
const checkout = resolve(checkoutArg ?? join(import.meta.dirname, '..', '..'))
const snapshot = experimentSnapshot(snapshotArg)
const MB = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`

interface Settled { rssBytes: number, arrayBuffersBytes: number, heapUsedBytes: number, heapTotalBytes: number, v8MallocedBytes: number, v8PeakMallocedBytes: number, regions: Record<string, number> }

/** The probe's readings, as its lines arrive on the service's stderr (child.output() keeps only the last KB). */
const readings: Settled[] = []
function listen (child: Child): void {
  let pending = ''
  child.process.stderr?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) {
      if (line.startsWith('SETTLED ')) readings.push(JSON.parse(line.slice('SETTLED '.length)) as Settled)
      if (line.startsWith('SPACES ')) console.log(line)
    }
  })
}

function alive (child: Child): void {
  if (child.exitedYet()) throw new Error(`the service exited:\n${child.output()}`)
}

/** Asks the probe for a settled reading and waits for its line. */
async function settled (child: Child): Promise<Settled> {
  const before = readings.length
  child.process.kill('SIGWINCH')
  for (let i = 0; i < 300 && readings.length === before; i++) {
    alive(child)
    await pause(100)
  }
  const reading = readings[before]
  if (reading === undefined) throw new Error(`no settled reading within 30 s:\n${child.output()}`)
  return reading
}

/**
 * Settled readings `quietSeconds` apart until two in a row are within 2 MB: memory a collection freed goes
 * back to the system over seconds (glibc, V8's unmapping), and one reading right after a load was 100 MB above
 * the next. The wait is V8's memory reducer's: it compacts the old generation and lets go of the young
 * generation's pooled pages once allocation has been quiet for some 8 s after a full collection, and a
 * forced collection starts that wait again, so readings 3 s apart never saw it (one first change read +8.2 MB
 * that way, and +0.3 MB 20 s later).
 */
async function steady (child: Child): Promise<Settled> {
  let last = await settled(child)
  for (let i = 0; i < 20; i++) {
    await pause(quietSeconds * 1000)
    const next = await settled(child)
    if (Math.abs(next.rssBytes - last.rssBytes) < 2e6) return next
    last = next
  }
  throw new Error('RSS did not settle within 20 readings')
}

/** Waits for /-/status to count `count` change files applied; a refused one (or a dead service) is an error. */
async function applied (child: Child, base: string, count: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    alive(child)
    const status = JSON.parse((await get(`${base}/-/status`)).body.toString('utf8')) as { reloads: { changeFiles?: { applied: number, refused: number } } }
    const files = status.reloads.changeFiles
    if ((files?.refused ?? 0) > 0) throw new Error(`the change file was refused:\n${child.output()}`)
    if ((files?.applied ?? 0) >= count) return
    await pause(100)
  }
  throw new Error(`the change file was not applied within 120 s:\n${child.output()}`)
}

// Beside the snapshot, so that it can be hard-linked in (one file system).
const work = await mkdtemp(join(dirname(snapshot), '.change-settled-'))
const probe = await plainScript(join(import.meta.dirname, 'settled-probe.ts'), join(import.meta.dirname, '..', '.data'))
const served = join(work, 'snapshot.jsonl')
/** A whole number from the environment, within bounds (the experiment's knobs). */
function count (name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name]
  const value = text === undefined || text === '' ? fallback : Number(text)
  if (!Number.isInteger(value) || value < min || value > max) throw new TypeError(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(process.env[name])}`)
  return value
}
const files = count('FILES', 2, 1, 99)
const upserts = count('UPSERTS', CHANGE_UPSERTS, 0, 100_000)
const deletes = count('DELETES', CHANGE_DELETES, upserts === 0 ? 1 : 0, 100_000)
const serveSeconds = count('SERVE_SECONDS', 0, 0, 600)
const quietSeconds = count('QUIET_SECONDS', 20, 1, 600)
const lateSeconds = (process.env.LATE_SECONDS ?? '').split(',').filter(text => text !== '').map(Number)
const staged = Array.from({ length: files }, (_, i) => join(work, `.change-${i + 1}.jsonl`))
let child: Child | undefined
try {
  await link(snapshot, served)
  await mkdir(`${served}.changes`)
  const changeBytes: number[] = []
  for (const [i, file] of staged.entries()) changeBytes.push(await writeChangeFile(snapshot, file, `bench-${String(i + 1).padStart(4, '0')}`, (upserts + deletes) * i, upserts, deletes))
  const port = await freePort()
  child = startChild('service', [...(process.env.NODE_ARGS ?? '').split(' ').filter(arg => arg !== ''), '--expose-gc', '--import', probe, join(checkout, 'dist', 'server.js'), '--snapshot-path', served, '--port', String(port), '--watch', 'true', '--log-level', 'info', '--request-log', 'false'],
    { env: { ...childEnv(), STATE_DIR: join(work, 'state') } })
  listen(child)
  const base = `http://127.0.0.1:${port}`
  await waitUntilAnswering(child, `${base}/-/readyz`, 600_000, 100)
  if (serveSeconds > 0) {
    // A replica serves pages before its first change arrives: its young generation and allocators are at the
    // sizes requests gave them. 400 pages (four languages' offsets and the largest companies), 8 connections.
    const requests = Array.from({ length: 400 }, (_, i) => ({ method: 'GET' as const, path: `/${['en', 'es', 'fr'][i % 3] as string}/api/internal/explore/?limit=20&offset=${(i * 37) % 2000}${i % 2 === 0 ? `&companies=${[7431, 319, 11205, 8090][i % 4] as number}` : ''}` }))
    const result = await autocannon({ url: base, connections: 8, duration: serveSeconds, requests })
    console.log(`served ${result.requests.total} requests in ${serveSeconds} s before the first reading (non-2xx: ${result.non2xx})`)
  }
  // Read once the listing is made ready for change files (slices after the load, ADR 026) and the parse
  // pool's threads have exited (idle for 30 s, ADR 022): each thread's heap is ~50 MB of RSS.
  await pause(35_000)
  alive(child)
  let before = await steady(child)
  const rss: number[] = []
  for (const [i, file] of staged.entries()) {
    await rename(file, join(`${served}.changes`, `${String(i + 1).padStart(4, '0')}-bench.jsonl`))
    await applied(child, base, i + 1)
    const after = await steady(child)
    rss.push(after.rssBytes)
    const bytes = changeBytes[i] as number
    const goal = before.rssBytes + 3 * bytes
    console.log(`change file ${i + 1}, ${MB(bytes)}; settled RSS before ${MB(before.rssBytes)}, after ${MB(after.rssBytes)} ` +
      `(${MB(after.rssBytes - before.rssBytes)} more); goal ≤ ${MB(goal)} (settled + 3× the file): ${after.rssBytes <= goal ? 'met' : 'not met'}`)
    console.log(`  array buffers (the items' chunks and the model's columns): ${MB(before.arrayBuffersBytes)} → ${MB(after.arrayBuffersBytes)}; ` +
      `V8 heap used ${MB(before.heapUsedBytes)} → ${MB(after.heapUsedBytes)}, its pages ${MB(before.heapTotalBytes)} → ${MB(after.heapTotalBytes)}; V8 malloc ${MB(before.v8MallocedBytes)} → ${MB(after.v8MallocedBytes)}, its peak ${MB(before.v8PeakMallocedBytes)} → ${MB(after.v8PeakMallocedBytes)}`)
    console.log(`  resident by mapping: ${Object.entries(after.regions).map(([kind, bytes]) => `${kind} ${MB(before.regions[kind] ?? 0)} → ${MB(bytes)}`).join(', ')}`)
    before = after
  }
  for (const seconds of lateSeconds) {
    // V8's memory reducer releases pooled pages only once allocation has gone quiet for a while.
    await pause(seconds * 1000)
    const late = await settled(child)
    console.log(`${seconds} s later: settled RSS ${MB(late.rssBytes)} (${MB(late.rssBytes - before.rssBytes)} against the last reading)`)
  }
  if (rss.length >= 3) {
    // Least squares over the readings after each file: the first file's one-time costs sit in the intercept.
    const n = rss.length
    const meanX = (n - 1) / 2
    const meanY = rss.reduce((sum, y) => sum + y, 0) / n
    let sxy = 0
    let sxx = 0
    for (const [x, y] of rss.entries()) {
      sxy += (x - meanX) * (y - meanY)
      sxx += (x - meanX) ** 2
    }
    const slope = sxy / sxx
    const fileBytes = changeBytes.reduce((sum, bytes) => sum + bytes, 0) / changeBytes.length
    console.log(`settled RSS per change file after the first (least squares over ${n} readings): ${MB(slope)}, ${(slope / fileBytes).toFixed(1)}× the mean file (${MB(fileBytes)}); goal 3×`)
  }
} finally {
  if (child !== undefined) await stopChild(child)
  await rm(work, { recursive: true, force: true })
}
