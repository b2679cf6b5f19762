// The memory budget as an operator meets it, with the real entry (`node dist/server.js`, built by `npm run build`):
// a snapshot about three times too big for the memory budget, published (renamed) over the one served, is
// refused with its numbers while the service keeps answering and no process is killed; the same file at
// startup is an exit 1 with the message. The budget comes from a cgroup's memory limit where this machine
// lets the test make one (Linux, root, a memory controller), and from MEMORY_LIMIT_MB everywhere. An
// estimate made too low on purpose (MEMORY_ESTIMATE_SCALE) lets a load start, and the watch abandons it.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdir, readFile, rename, rmdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Status } from '../../src/schemas/operations.js'
import { hasReusePort } from '../../src/serving/serving-mode.js'
import { BUILT_SERVER as SERVER, childEnv, EXPLORE, makeItem, OUTPUT_WAIT_MS, smallSnapshot, tempDir, toJsonLines, watchOutput } from '../helpers.js'

const MiB = 1024 * 1024
/** The budget: the service with a small snapshot holds ~95 MB of it. */
const BUDGET_MB = 200
/**
 * A JSON Lines snapshot of this size is estimated at ~300 MB at its peak (memory-budget.ts, PEAK_ESTIMATE):
 * about three times what the budget leaves free.
 */
const BIG_BYTES = 150e6

/** A valid JSON Lines snapshot of about `bytes`: the same item again and again, each with a pk of its own. */
async function writeBigSnapshot (file: string, bytes: number): Promise<void> {
  const [before, after] = JSON.stringify({ language: 'en', ...makeItem(0, '2024-01-01', [1, 2], { translated_abstract: 'x'.repeat(1200) }) }).split('"pk":0')
  const out = createWriteStream(file)
  let written = 0
  let pk = 1
  while (written < bytes) {
    let block = ''
    while (block.length < 4 * MiB) block += `${before}"pk":${pk++}${after}\n`
    written += block.length
    if (!out.write(block)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'close')
}

/** `pid`'s RSS once under `bytes`, or after OUTPUT_WAIT_MS: RSS has no event for falling, so it is read again. */
async function rssBelow (pid: number, bytes: number): Promise<number> {
  for (const until = Date.now() + OUTPUT_WAIT_MS; ;) {
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024
    if (rss < bytes || Date.now() > until) return rss
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

/** A child memory cgroup of this process's own, with `limitBytes`; or why there cannot be one here. */
async function memoryCgroup (t: Parameters<typeof tempDir>[0], limitBytes: number): Promise<{ dir: string, oomKills: () => Promise<number> } | string> {
  if (process.platform !== 'linux') return 'cgroups are Linux\'s'
  const lines = (await readFile('/proc/self/cgroup', 'utf8')).split('\n').map(line => line.split(':'))
  const v1 = lines.find(([, controllers]) => (controllers ?? '').split(',').includes('memory'))
  const v2 = lines.find(([id, controllers]) => id === '0' && controllers === '')
  const [base, limitFile, eventsFile] = v1 !== undefined && existsSync('/sys/fs/cgroup/memory')
    ? [join('/sys/fs/cgroup/memory', v1.slice(2).join(':')), 'memory.limit_in_bytes', 'memory.oom_control']
    : v2 !== undefined && existsSync(join('/sys/fs/cgroup', v2.slice(2).join(':'), 'memory.max'))
      ? [join('/sys/fs/cgroup', v2.slice(2).join(':')), 'memory.max', 'memory.events']
      : [null, '', '']
  if (base === null) return 'no cgroup memory controller for this process (neither v1\'s /sys/fs/cgroup/memory nor a v2 memory.max)'
  const dir = join(base, `explore-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`)
  try {
    await mkdir(dir)
    await writeFile(join(dir, limitFile), String(limitBytes))
  } catch (error) {
    await rmdir(dir).catch(() => {})
    return `a memory cgroup cannot be made here (${(error as Error).message}): run as root on a machine with a memory controller`
  }
  // After the processes in it have exited (teardowns run after the test's own).
  t.teardown(async () => { await rmdir(dir).catch(() => {}) })
  const oomKills = async () => Number(/oom_kill (\d+)/.exec(await readFile(join(dir, eventsFile), 'utf8'))?.[1] ?? 0)
  return { dir, oomKills }
}

interface Server {
  child: ChildProcess
  exited: Promise<{ code: number | null, signal: string | null, stderr: string }>
  url: Promise<string>
  logged: (pattern: RegExp) => Promise<void>
  /** Resolves when the reload under way has ended, with its log line's message. */
  reloadEnded: () => Promise<string>
  /** Everything the server printed on stdout so far: what a failed assertion shows. */
  printed: () => string
}

/** The server on `snapshot`, in `cgroup` when given: the shell puts itself in it, then becomes the server. */
function start (t: Parameters<typeof tempDir>[0], snapshot: string, env: Record<string, string>, cgroup: string | null): Server {
  const command = [process.execPath, SERVER, snapshot]
  // The caches' reserve kept small (each thread's pages, hashes and unions: ~11 MB), so the budget is the snapshot's.
  const serverEnv = childEnv({ PAGE_CACHE_MB: '8', ...env, PORT: '0', REQUEST_LOG: 'false' })
  const child = cgroup === null
    ? spawn(command[0] as string, command.slice(1), { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, ...command], { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  // stderr kept apart for the exit's report; the log lines waited for are stdout's.
  let stderr = ''
  child.stderr?.on('data', chunk => { stderr += chunk })
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null, stderr }))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  })
  // Each wait fails with what was printed if the server exits first or OUTPUT_WAIT_MS pass.
  const output = watchOutput(child)
  const logged = async (pattern: RegExp): Promise<void> => { await output.logged(pattern) }
  // Listening and the first snapshot loaded, in either order.
  const url = Promise.all([logged(/"msg":"Server listening at http/), logged(/"msg":"snapshot loaded"/)])
    .then(() => (/"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[,"]/.exec(output.text()) as RegExpExecArray)[1] as string)
  url.catch(() => {})
  const reloadsEnded = async (count: number): Promise<string[]> => {
    // Counted from the call: the caller asks before it renames the file in.
    const from = output.text().length
    const ended = /"msg":"(snapshot reloaded|snapshot reload failed[^"]*)"/g
    await output.logged(ended, count, from)
    return [...output.text().slice(from).matchAll(ended)].map(match => match[1] as string).slice(0, count)
  }
  const reloadEnded = async (): Promise<string> => (await reloadsEnded(1))[0] as string
  return { child, exited, url, logged, reloadEnded, printed: () => output.text() }
}

/** Asks for a page again and again until `stop`: every answer's status, and any request that failed. */
function keepAsking (url: string): { stop: () => Promise<{ statuses: number[], failures: string[] }> } {
  const statuses: number[] = []
  const failures: string[] = []
  const state = { going: true }
  const asking = (async () => {
    while (state.going) {
      try {
        const res = await fetch(`${url}${EXPLORE}?limit=1`)
        await res.arrayBuffer()
        statuses.push(res.status)
      } catch (error) {
        failures.push((error as Error).message)
      }
    }
  })()
  return { stop: async () => { state.going = false; await asking; return { statuses, failures } } }
}

const SHORTFALL = new RegExp(`^needs ~[\\d,]+ MB at its peak; [\\d,]+ MB of the ${BUDGET_MB} MB budget are free \\([\\d,]+ MB kept for the caches\\)$`)

t.test('prerequisite: the built server', async t => {
  t.ok(existsSync(SERVER), `${SERVER} exists (npm run build)`)
})

const setups: Array<{ name: string, env: Record<string, string>, cgroup: boolean }> = [
  { name: 'a cgroup\'s memory limit', env: {}, cgroup: true },
  { name: 'MEMORY_LIMIT_MB', env: { MEMORY_LIMIT_MB: String(BUDGET_MB) }, cgroup: false }
]

for (const setup of setups) {
  t.test(`the budget from ${setup.name}`, async t => {
    if (!existsSync(SERVER)) return t.plan(0, 'npm run build first')
    const cgroup = setup.cgroup ? await memoryCgroup(t, BUDGET_MB * MiB) : null
    if (typeof cgroup === 'string') return t.plan(0, cgroup)
    const dir = await tempDir(t)
    const served = join(dir, 'snapshot.jsonl')
    await writeFile(served, toJsonLines(smallSnapshot()))
    const big = join(dir, 'big.jsonl.tmp')
    await writeBigSnapshot(big, BIG_BYTES)

    t.test('a snapshot too big published over the served one is refused with its numbers; the service answers throughout', async t => {
      const server = start(t, served, setup.env, cgroup?.dir ?? null)
      const url = await server.url
      const asking = keepAsking(url)
      const refused = server.reloadEnded()
      // An editor's publish: the new file renamed over the served one.
      const published = join(dir, 'published.jsonl.tmp')
      await rename(big, published)
      await rename(published, served)
      t.match(await refused, /^snapshot reload failed; still serving the last good snapshot/)
      const { statuses, failures } = await asking.stop()
      t.same(failures, [], 'no request failed')
      t.ok(statuses.length > 0 && statuses.every(status => status === 200), `every page answered 200 (${statuses.length})`)

      const status = await (await fetch(`${url}/-/status`)).json() as Status
      t.equal(status.snapshot?.items.en, 25, 'the served snapshot is unchanged')
      t.same(status.reloads.refusals, { invalid: 0, too_big: 1 })
      t.equal(status.reloads.recentFailures[0]?.reason, 'too_big')
      t.match(status.reloads.recentFailures[0]?.problems, [SHORTFALL])
      t.match(status.memory, { budget: BUDGET_MB * MiB, budgetSource: setup.cgroup ? /^cgroup v[12]$/ : 'MEMORY_LIMIT_MB' })
      const tooBig = status.memory?.lastTooBig
      t.ok(tooBig !== null && tooBig !== undefined && tooBig.neededBytes > 2.5 * tooBig.freeBytes, `about three times too big: needs ${tooBig?.neededBytes}, ${tooBig?.freeBytes} free`)
      t.equal((await fetch(`${url}/-/readyz`)).status, 200, 'still ready')

      const metrics = await (await fetch(`${url}/-/metrics`)).text()
      t.match(metrics, 'explore_snapshot_refusals_total{reason="too_big"} 1')
      t.match(metrics, `explore_memory_budget_bytes ${BUDGET_MB * MiB}`)
      t.match(metrics, `explore_snapshot_refused_estimate_bytes ${tooBig?.neededBytes}`)
      const console = await (await fetch(`${url}/-/`)).text()
      t.match(console, `${BUDGET_MB} MB (${status.memory?.budgetSource})`)
      t.match(console, 'it does not fit in the memory budget')

      t.equal(server.child.exitCode, null, 'the service was not killed')
      if (cgroup !== null) t.equal(await cgroup.oomKills(), 0, 'the kernel killed nothing in the cgroup')
      server.child.kill('SIGTERM')
      t.match(await server.exited, { code: 0 })
      // The file stays for the next test, under the name an editor would give it.
      await rename(served, big)
      await writeFile(served, toJsonLines(smallSnapshot()))
    })

    t.test('the same file at startup: exit 1 with the message, no kill', async t => {
      const { code, signal, stderr } = await start(t, big, setup.env, cgroup?.dir ?? null).exited
      t.equal(signal, null)
      t.equal(code, 1)
      t.match(stderr, new RegExp(`^snapshot ${big.replace(/[.]/g, '\\.')} does not fit in memory: needs ~[\\d,]+ MB at its peak; [\\d,]+ MB of the ${BUDGET_MB} MB budget are free \\([\\d,]+ MB kept for the caches\\)\n$`))
      if (cgroup !== null) t.equal(await cgroup.oomKills(), 0, 'the kernel killed nothing in the cgroup')
    })
  })
}

t.test('an estimate too low (MEMORY_ESTIMATE_SCALE) lets the load start; the watch abandons it at the budget', async t => {
  if (!existsSync(SERVER)) return t.plan(0, 'npm run build first')
  // Where the machine allows, in a cgroup whose limit is above the budget: the watch, not the kernel, stops it.
  const cgroup = await memoryCgroup(t, 2 * BUDGET_MB * MiB)
  const dir = await tempDir(t)
  const served = join(dir, 'snapshot.jsonl')
  await writeFile(served, toJsonLines(smallSnapshot()))
  const big = join(dir, 'big.jsonl.tmp')
  await writeBigSnapshot(big, BIG_BYTES)
  const server = start(t, served, { MEMORY_LIMIT_MB: String(BUDGET_MB), MEMORY_ESTIMATE_SCALE: '0.1', PAGE_CACHE_MB: '0' }, typeof cgroup === 'string' ? null : cgroup.dir)
  const url = await server.url
  const asking = keepAsking(url)
  const abandoned = server.reloadEnded()
  await rename(big, served)
  t.match(await abandoned, /^snapshot reload failed; still serving the last good snapshot\\n.*the load was abandoned$/)
  const { statuses, failures } = await asking.stop()
  t.same(failures, [], 'no request failed')
  t.same(statuses.filter(status => status !== 200), [], `every page answered 200 (${statuses.length})`)
  const status = await (await fetch(`${url}/-/status`)).json() as Status
  t.same(status.reloads.refusals, { invalid: 0, too_big: 1 })
  t.match(status.reloads.recentFailures[0]?.problems, [new RegExp(`^reached the ${BUDGET_MB} MB budget while loading \\([\\d,]+ MB in use; estimated to need ~\\d+ MB at its peak\\): the load was abandoned$`)])
  t.equal(status.snapshot?.items.en, 25, 'the served snapshot is unchanged')

  // What the abandoned load built was let go: once it has left RSS, the next file loads within the same budget.
  // The service waits for it while RSS falls; the test waits too, so a slow fall beside CI's other files is no
  // refusal here (2 runs on 2026-12-02, before that wait).
  const rss = await rssBelow(server.child.pid as number, (BUDGET_MB - 16) * MiB)
  t.ok(rss < (BUDGET_MB - 16) * MiB, `the abandoned load's memory left RSS (${Math.round(rss / MiB)} MB)`)
  const loaded = server.reloadEnded()
  const next = join(dir, 'next.jsonl.tmp')
  const doc = smallSnapshot()
  doc.languages.en = doc.languages.en!.slice(0, 10)
  await writeFile(next, toJsonLines(doc))
  await rename(next, served)
  t.equal(await loaded, 'snapshot reloaded', 'the next file loads', { printed: server.printed().slice(-3000) })
  t.equal(((await (await fetch(`${url}${EXPLORE}`)).json()) as { count: number }).count, 10)
  t.equal(server.child.exitCode, null, 'the service was not killed')
  if (typeof cgroup !== 'string') t.equal(await cgroup.oomKills(), 0, 'the kernel killed nothing in the cgroup')
})

t.test('WORKERS=2: one load for every serving thread, within the one process\'s budget; a file too big is refused once', { skip: !hasReusePort() && `serving threads need Node 22.12 or later; this is Node ${process.versions.node}` }, async t => {
  if (!existsSync(SERVER)) return t.plan(0, 'npm run build first')
  // The file needs ~330 MB at its peak: more than is free of 300 MB beside the process and its threads.
  const budgetMb = 300
  const dir = await tempDir(t)
  const served = join(dir, 'snapshot.jsonl')
  await writeFile(served, toJsonLines(smallSnapshot()))
  const big = join(dir, 'big.jsonl.tmp')
  await writeBigSnapshot(big, BIG_BYTES)
  const server = start(t, served, { MEMORY_LIMIT_MB: String(budgetMb), WORKERS: '2' }, null)
  await server.logged(/"msg":"snapshot loaded"/)
  const url = await server.url
  const asking = keepAsking(url)
  const ended = server.reloadEnded()
  await rename(big, served)
  t.match(await ended, /^snapshot reload failed/, 'refused, once for the whole process')
  const { statuses, failures } = await asking.stop()
  t.same(failures, [], 'no request failed')
  t.same(statuses.filter(status => status !== 200), [], `every page answered 200 (${statuses.length})`)
  const metrics = await (await fetch(`${url}/-/metrics`)).text()
  t.match(metrics, 'explore_snapshot_refusals_total{reason="too_big"} 1')
  t.match(metrics, `explore_memory_budget_bytes ${budgetMb * MiB}`)
  const status = await (await fetch(`${url}/-/status`)).json() as Status
  t.match(status.reloads.recentFailures[0]?.problems, [new RegExp(`^needs ~[\\d,]+ MB at its peak; [\\d,]+ MB of the ${budgetMb} MB budget are free \\([\\d,]+ MB kept for the caches\\)$`)])
  t.equal(status.snapshot?.items.en, 25, 'the served snapshot is unchanged')
  t.equal(status.servingThreads?.length, 2, 'served by two threads')
  t.equal(server.child.exitCode, null, 'the service was not killed')
})
