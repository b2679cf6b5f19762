// Issue 23's memory goal read settled: the service's RSS after full collections, before a change file of
// the bench's (1,000 upserts, 100 deletes) and after it is applied, with no requests. The bench's change
// workload reads RSS under load and unsettled, which moves by tens of MB either way; the goal is "settled +
// 3× the change file's size".
//   npx tsx bench/experiments/change-settled.ts [CHECKOUT] [SNAPSHOT]
// CHECKOUT: a built checkout (default this one); SNAPSHOT: default the bench's 1M JSON Lines file.
import { link, mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { writeChangeFile } from '../change-file.js'
import { plainScript } from '../plain-script.js'
import { experimentSnapshot } from '../snapshots.js'
import { childEnv, freePort, logEntries, startChild, stopChild, waitUntilAnswering, type Child } from '../processes.js'

const [checkoutArg, snapshotArg] = process.argv.slice(2)
const checkout = resolve(checkoutArg ?? join(import.meta.dirname, '..', '..'))
const snapshot = experimentSnapshot(snapshotArg)
const MB = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`

interface Settled { rssBytes: number, arrayBuffersBytes: number }

/** Asks the probe for a settled reading and waits for its line. */
async function settled (child: Child): Promise<Settled> {
  const before = child.output().split('SETTLED ').length
  child.process.kill('SIGWINCH')
  for (let i = 0; i < 300; i++) {
    const parts = child.output().split('SETTLED ')
    if (parts.length > before) return JSON.parse((parts.at(-1) as string).split('\n')[0] as string) as Settled
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`no settled reading within 30 s:\n${child.output()}`)
}

/**
 * Settled readings every 3 s until two in a row are within 2 MB: memory a collection freed goes back to the
 * system over seconds (glibc, V8's unmapping), and one reading right after a load was 100 MB above the next.
 */
async function steady (child: Child): Promise<Settled> {
  let last = await settled(child)
  for (let i = 0; i < 20; i++) {
    await new Promise(resolve => setTimeout(resolve, 3000))
    const next = await settled(child)
    if (Math.abs(next.rssBytes - last.rssBytes) < 2e6) return next
    last = next
  }
  throw new Error('RSS did not settle within 20 readings')
}

async function until (child: Child, message: string, count: number): Promise<void> {
  for (let i = 0; i < 1200 && logEntries(child.output(), message).length < count; i++) await new Promise(resolve => setTimeout(resolve, 100))
  if (logEntries(child.output(), message).length < count) throw new Error(`no "${message}" within 120 s:\n${child.output()}`)
}

const work = await mkdtemp(join(tmpdir(), 'change-settled-'))
const probe = await plainScript(join(import.meta.dirname, 'settled-probe.ts'), join(import.meta.dirname, '..', '.data'))
const served = join(work, 'snapshot.jsonl')
const staged = join(work, '.change.jsonl')
let child: Child | undefined
try {
  await link(snapshot, served)
  await mkdir(`${served}.changes`)
  const changeBytes = await writeChangeFile(snapshot, staged)
  const port = await freePort()
  child = startChild('service', ['--expose-gc', '--import', probe, join(checkout, 'dist', 'server.js'), '--snapshot-path', served, '--port', String(port), '--watch', 'true', '--log-level', 'info', '--request-log', 'false'],
    { env: { ...childEnv(), STATE_DIR: join(work, 'state') } })
  await waitUntilAnswering(child, `http://127.0.0.1:${port}/-/readyz`, 600_000, 100)
  // Read once the listing is made ready for change files (slices after the load, ADR 026) and the parse
  // pool's threads have exited (idle for 30 s, ADR 022): each thread's heap is ~50 MB of RSS.
  await new Promise(resolve => setTimeout(resolve, 35_000))
  const start = await steady(child)
  await rename(staged, join(`${served}.changes`, '0001-bench.jsonl'))
  await until(child, 'change file applied', 1)
  const applied = await steady(child)
  const goal = start.rssBytes + 3 * changeBytes
  console.log(`change file ${MB(changeBytes)}; settled RSS before ${MB(start.rssBytes)}, after ${MB(applied.rssBytes)} ` +
    `(${MB(applied.rssBytes - start.rssBytes)} more); goal ≤ ${MB(goal)} (settled + 3× the file): ${applied.rssBytes <= goal ? 'met' : 'not met'}`)
  console.log(`array buffers (the items' chunks and the model's columns): ${MB(start.arrayBuffersBytes)} → ${MB(applied.arrayBuffersBytes)}`)
} finally {
  if (child !== undefined) await stopChild(child)
  await rm(work, { recursive: true, force: true })
}
