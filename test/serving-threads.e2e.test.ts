// WORKERS=2: one process, a control thread and two serving threads over one copy of the snapshot (ADR 029),
// the real entry point. What is awaited is what the process logs or says in /-/status, never a fixed delay.
import t, { type Test } from 'tap'
import http from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, open, readFile, readdir, readlink, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { hasReusePort } from '../src/serving/serving-mode.js'
import { askMany, BUILT_SERVER as SERVER, childEnv, eventually, freePort, makeItem, type SnapshotDoc, tempDir, versioned, watchOutput } from './helpers.js'

const HOOKS = join(import.meta.dirname, 'fixtures', 'serving-test-hooks.ts')
// The built server loads the TypeScript hooks through the tests' own loader.
const TYPESCRIPT = join(import.meta.dirname, 'register-typescript.mjs')
const skip = hasReusePort() ? false : `serving threads need Node 22.12 or later (reusePort); this is Node ${process.versions.node}`

/**
 * `meanwhile` runs once the process is spawned, before its start's last line is waited for. `again`: the file of
 * an earlier start, served as it is (its STATE_DIR, by the file's path, is that start's).
 */
async function startThreads (
  t: Test, doc: SnapshotDoc, extra: string[] = [], env: Record<string, string> = {},
  meanwhile: (logged: (pattern: RegExp) => Promise<unknown>, pid: number) => Promise<void> = async () => {},
  again: string | null = null
) {
  const dir = again === null ? await tempDir(t) : join(again, '..')
  const file = join(dir, 'snapshot.json')
  if (again === null) await writeFile(file, JSON.stringify(doc))
  const child = spawn(process.execPath, ['--import', TYPESCRIPT, '--import', HOOKS, SERVER, '--snapshot-path', file, '--port', '0', '--workers', '2', '--reload-debounce-ms', '50', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info', ...env }) })
  const { logged, text, origin } = watchOutput(child)
  const exited = once(child, 'exit').then(([code]) => code as number)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await meanwhile(logged, child.pid as number)
  // The last line of the start: the operator's port, when asked for, listens before it.
  await logged(/"msg":"console"/)
  const port = Number(new URL(await origin()).port)
  return { child, exited, logged, port, file, dir, log: text }
}

async function get (port: number, path: string, init: RequestInit = {}): Promise<{ status: number, body: string }> {
  // A connection of its own each time: the kernel spreads connections, not requests, between the threads.
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { connection: 'close', ...init.headers } })
  return { status: res.status, body: await res.text() }
}

interface ThreadsStatus {
  snapshot: { version: string } | null
  reloads: { succeeded: number }
  servingThreads: Array<{ id: number, threadId: number, version: string | null, restarts: number, lettingGo: string[] }>
}

async function statusWhen (port: number, ready: (status: ThreadsStatus) => boolean): Promise<ThreadsStatus> {
  return await eventually(`a status with ${ready.toString()}`, async () => {
    // A connection the kernel gave a thread that is dying is reset: asked again.
    const answer = await get(port, '/-/status').catch(() => null)
    if (answer === null) return undefined
    const status = JSON.parse(answer.body) as ThreadsStatus
    return ready(status) ? status : undefined
  })
}

const allServe = (version?: string) => (s: ThreadsStatus) => s.snapshot !== null && s.servingThreads.length === 2 &&
  s.servingThreads.every(thread => thread.version === (version ?? s.snapshot?.version))

/** The sockets listening on `port`, by the pid holding them (Linux: /proc/net/tcp* and the process's fds). */
async function listeningSockets (port: number, pid: number): Promise<number> {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await readFile(table, 'utf8')).split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields[3] === '0A' && parseInt(fields[1]?.split(':')[1] ?? '', 16) === port) inodes.add(fields[9] as string)
    }
  }
  const links = await Promise.all((await readdir(`/proc/${pid}/fd`)).map(async fd => await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')))
  return links.filter(link => inodes.has(/^socket:\[(\d+)\]$/.exec(link)?.[1] ?? '')).length
}

t.test('one process, two serving threads on one port, one load; one scrape counts every thread\'s answers once', { skip }, async t => {
  const service = await startThreads(t, versioned(1))
  const status = await statusWhen(service.port, allServe())
  t.equal(new Set(status.servingThreads.map(thread => thread.threadId)).size, 2, 'two threads')
  if (process.platform === 'linux') t.equal(await listeningSockets(service.port, service.child.pid as number), 2, 'two listening sockets on the port, both the one process\'s')
  t.equal(service.log().match(/"msg":"snapshot loaded"/g)?.length, 1, 'the snapshot is loaded once')

  for (let i = 0; i < 20; i++) t.equal((await get(service.port, '/en/api/internal/explore/?limit=1')).status, 200)
  const metrics = (await get(service.port, '/-/metrics')).body
  const pages = [...metrics.matchAll(/^explore_http_requests_total\{[^}]*route="\/:lang\/api\/internal\/explore\/"[^}]*status="200"[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
  t.equal(pages, 20, 'the answers of both threads, each counted once')
  t.match(metrics, /^explore_http_request_duration_seconds_count\{route="\/:lang\/api\/internal\/explore\/",method="GET",status="200"\} 20$/m, 'the histogram keeps its labels when summed')
  t.match(metrics, /^explore_snapshot_items\{language="en"\} 21$/m, 'snapshot figures once')
  t.equal(metrics.split('\n').filter(line => line.startsWith('explore_build_info')).length, 1, 'the build once')
  t.match(metrics, /^explore_serving_eventloop_lag_max_seconds \d/m, 'the serving threads\' own event-loop lag')

  await writeFile(`${service.file}.tmp`, JSON.stringify(versioned(2)))
  await rename(`${service.file}.tmp`, service.file)
  const after = await statusWhen(service.port, s => s.reloads.succeeded === 1 && allServe()(s))
  t.not(after.snapshot?.version, status.snapshot?.version)
  for (let i = 0; i < 20; i++) t.match((await get(service.port, '/en/api/internal/explore/?limit=1')).body, /"v2 item/)
  t.match((await get(service.port, '/-/metrics')).body, /^explore_snapshot_reloads_total\{outcome="success"\} 1$/m, 'one reload counts once')
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('reloads under load: every version a serving thread let go leaves its memory once the answers from it end', { skip }, async t => {
  const service = await startThreads(t, versioned(1))
  await statusWhen(service.port, allServe())
  const load = { on: true }
  let answered = 0
  // Eight clients on connections of their own, asking for pages while the versions change under them.
  const clients = Array.from({ length: 8 }, async (_, n) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    while (load.on) {
      await new Promise<void>((resolve, reject) => {
        http.get({ port: service.port, host: '127.0.0.1', agent, path: `/en/api/internal/explore/?limit=${1 + (answered + n) % 20}` }, res => {
          res.resume()
          res.on('end', () => { answered++; resolve() })
        }).on('error', reject)
      })
    }
    agent.destroy()
  })
  const letGo = new Set<string>()
  for (let version = 2; version <= 5; version++) {
    await writeFile(`${service.file}.tmp`, JSON.stringify(versioned(version)))
    await rename(`${service.file}.tmp`, service.file)
    // Every poll's letting-go noted, not only the last: a thread may let a version go between two.
    await statusWhen(service.port, s => {
      for (const thread of s.servingThreads) for (const held of thread.lettingGo) letGo.add(held)
      return s.reloads.succeeded === version - 1 && allServe()(s)
    })
  }
  load.on = false
  await Promise.all(clients)
  t.ok(answered > 100, `pages answered throughout (${answered})`)
  const settled = await statusWhen(service.port, s => s.servingThreads.every(thread => thread.lettingGo.length === 0))
  t.same(settled.servingThreads.map(thread => thread.lettingGo), [[], []], 'no thread holds a version it let go')
  t.ok(letGo.size > 0, `threads said which versions they were letting go (${letGo.size} seen)`)
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('a restart reads the version image the first start wrote, and every thread serves it', { skip }, async t => {
  const first = await startThreads(t, versioned(1))
  await statusWhen(first.port, s => allServe()(s))
  // The same page but for the port its links name.
  const page = async (port: number) => {
    const { status, body } = await get(port, '/en/api/internal/explore/?companies=1&limit=3')
    return { status, body: body.replaceAll(`127.0.0.1:${port}`, 'the host') }
  }
  const parsed = await page(first.port)
  await eventually('the image written', async () => {
    const status = JSON.parse((await get(first.port, '/-/status')).body) as { reloads: { images?: { written: number } } }
    return (status.reloads.images?.written ?? 0) > 0 ? true : undefined
  })
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)
  const again = await startThreads(t, versioned(1), [], {}, async () => {}, first.file)
  const status = await statusWhen(again.port, allServe()) as ThreadsStatus & { snapshot: { imageMs: number | null } }
  t.type(status.snapshot.imageMs, 'number', 'read from the image')
  t.match(again.log(), /"msg":"snapshot read from its version image"/)
  // A connection each: both threads answer, each from the version read back.
  for (let i = 0; i < 10; i++) t.same(await page(again.port), parsed)
  again.child.kill('SIGTERM')
  t.equal(await again.exited, 0)
})

t.test('ready only once every serving thread serves the first version', { skip }, async t => {
  // Threads slow to take a version: ready as soon as the control thread had loaded would send pages to
  // threads that have none yet (their 503).
  const service = await startThreads(t, versioned(1), [], { EXPLORE_TEST_SLOW_SWAP_MS: '3000', EXPLORE_TEST_LISTEN_BARE: '1' })
  const seen: number[] = []
  await eventually('/-/readyz 200', async () => {
    const { status } = await get(service.port, '/-/readyz')
    seen.push(status)
    return status === 200 ? status : undefined
  })
  t.ok(seen.includes(503), `unready first (${seen.length} asks)`)
  for (let i = 0; i < 20; i++) t.equal((await get(service.port, '/en/api/internal/explore/?limit=1')).status, 200, 'every thread serves once ready')
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('a thread that starts while the first version is published listens only once it serves it', { skip }, async t => {
  // The threads start only once the first load has ended (the gate), and take a version sent to them 3 s
  // late: a thread that listened first and took the version by message would answer 503s for pages after
  // the start's last line.
  const dir = await tempDir(t)
  const gate = join(dir, 'start')
  const started = startThreads(t, versioned(1), [], { EXPLORE_TEST_START_GATE: gate, EXPLORE_TEST_SLOW_SWAP_MS: '3000' }, async logged => {
    await logged(/"msg":"snapshot loaded"/)
    await writeFile(gate, '')
  })
  const service = await started
  const statuses = []
  for (let i = 0; i < 20; i++) statuses.push((await get(service.port, '/en/api/internal/explore/?limit=1')).status)
  t.same(statuses.filter(status => status !== 200), [], 'every page 200 from the first')
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

/** The code a socket that sets reusePort meets binding 127.0.0.1:`port`, as another replica's thread would; null: bound. */
async function joinError (port: number): Promise<string | null> {
  const { createServer } = await import('node:net')
  const server = createServer()
  try {
    await once(server.listen({ port, host: '127.0.0.1', reusePort: true } as { port: number }), 'listening')
    return null
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error'
  } finally {
    server.close()
  }
}

t.test('the port is held from before the threads start: another replica\'s threads cannot join it meanwhile', { skip }, async t => {
  const gate = join(await tempDir(t), 'start')
  const port = await freePort()
  const service = await startThreads(t, versioned(1), ['--port', String(port)], { EXPLORE_TEST_START_GATE: gate }, async (_, pid) => {
    // The claim, seen without binding: a bind of ours could take the port before it.
    await eventually('the control holding the port', async () => await listeningSockets(port, pid) === 1 ? true : undefined)
    t.equal(await joinError(port), 'EADDRINUSE', 'while the threads wait to start')
    await writeFile(gate, '')
  })
  t.equal((await get(service.port, '/en/api/internal/explore/?limit=1')).status, 200)
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('stdout a file: both threads\' lines whole, the threads\' close leaves it open, and the process\'s last line is written', { skip }, async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(versioned(1)))
  const log = join(dir, 'out.log')
  const out = await open(log, 'w')
  t.teardown(() => out.close())
  const child = spawn(process.execPath, [SERVER, '--snapshot-path', file, '--port', '0', '--workers', '2'],
    { stdio: ['ignore', out.fd, 'pipe'], env: childEnv({ LOG_LEVEL: 'info' }) })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let stderr = ''
  child.stderr?.on('data', chunk => { stderr += chunk })
  const exited = once(child, 'exit')
  await eventually('the start\'s last line', async () => (await readFile(log, 'utf8')).includes('"msg":"console"') ? true : undefined)
  const port = Number(/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)[,"]/.exec(await readFile(log, 'utf8'))?.[1])
  // Both threads log at once into one file in writes of up to 64 KiB (ADR 032): 2,000 request lines, none torn.
  // 16 connections: the kernel spreads connections, not requests, between the threads.
  await askMany(port, 2000, () => ({ path: '/en/api/internal/explore/?limit=5' }), 16)
  child.kill('SIGTERM')
  t.same(await exited, [0, null])
  const lines = (await readFile(log, 'utf8')).trimEnd().split('\n').map(line => {
    try { return JSON.parse(line) as { msg?: string, reqId?: string } } catch { return { msg: `torn: ${line.slice(0, 80)}` } }
  })
  t.same(lines.filter(line => line.msg?.startsWith('torn') === true), [], 'every line whole')
  const requests = lines.filter(line => line.msg === 'request')
  t.equal(requests.length, 2000, 'every request logged')
  // A request's id starts with its thread's (request-id.ts).
  t.equal(new Set(requests.map(line => /^req-\w+-/.exec(line.reqId ?? '')?.[0])).size, 2, 'by both threads')
  // A serving thread's log stream closed fd 1 for the whole process (Node 24 warned of it on stderr).
  t.match((await readFile(log, 'utf8')).trimEnd().split('\n').at(-1), /"msg":"closed"/, 'the control\'s last line')
  t.equal(stderr, '')
})

t.test('a change file is applied once, on the control thread, and every thread serves its version', { skip }, async t => {
  const service = await startThreads(t, versioned(1))
  await statusWhen(service.port, allServe())
  const changes = `${service.file}.changes`
  await mkdir(changes, { recursive: true })
  const lines = [{ changes: 'explore', version: 1, id: 'c1' }, { op: 'upsert', language: 'en', ...makeItem(500, '2030-01-01', [0], { translated_title: 'changed on top' }) }]
  await writeFile(join(changes, 'c1.jsonl.tmp'), lines.map(line => `${JSON.stringify(line)}\n`).join(''))
  await rename(join(changes, 'c1.jsonl.tmp'), join(changes, 'c1.jsonl'))
  const status = await statusWhen(service.port, s => s.snapshot?.version.endsWith('+c1') === true && allServe()(s))
  t.ok(status.servingThreads.every(thread => thread.version === status.snapshot?.version), 'both threads serve the derived version')
  for (let i = 0; i < 20; i++) t.match((await get(service.port, '/en/api/internal/explore/?limit=1')).body, /changed on top/)
  t.equal(service.log().match(/"msg":"change file applied"/g)?.length, 1, 'applied once, not once a thread')
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('a rollback is answered only once every thread serves the version; unpin brings the newest back everywhere', { skip }, async t => {
  const opsPort = await freePort()
  // Threads slow to take a version: a rollback answered before they had would be seen serving the old one.
  const service = await startThreads(t, versioned(1), ['--ops-port', String(opsPort)], { OPS_TOKEN: 'a-token-of-sixteen-or-more', EXPLORE_TEST_SLOW_SWAP_MS: '300' })
  const first = await statusWhen(opsPort, allServe())
  await writeFile(`${service.file}.tmp`, JSON.stringify(versioned(2)))
  await rename(`${service.file}.tmp`, service.file)
  await statusWhen(opsPort, s => s.reloads.succeeded === 1 && allServe()(s))
  t.equal((await get(service.port, '/-/status')).status, 404, 'the operator\'s pages are not on the public port')

  const rollback = await get(opsPort, '/-/rollback', { method: 'POST', headers: { authorization: 'Bearer a-token-of-sixteen-or-more' } })
  t.equal(rollback.status, 200, rollback.body)
  // At once, no waiting: every fresh connection, whichever thread takes it, gets the version rolled back to.
  for (let i = 0; i < 20; i++) t.match((await get(service.port, '/en/api/internal/explore/?limit=1')).body, /"v1 item/)
  const rolled = await statusWhen(opsPort, () => true)
  t.equal(rolled.snapshot?.version, first.snapshot?.version)

  t.equal((await get(opsPort, '/-/unpin', { method: 'POST', headers: { authorization: 'Bearer a-token-of-sixteen-or-more' } })).status, 200)
  for (let i = 0; i < 20; i++) t.match((await get(service.port, '/en/api/internal/explore/?limit=1')).body, /"v2 item/)
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('a serving thread that dies is logged, started again, and serves the current version', { skip }, async t => {
  const dir = await tempDir(t)
  const dieFile = join(dir, 'die')
  const service = await startThreads(t, versioned(1), [], { EXPLORE_TEST_DIE_FILE: dieFile })
  await statusWhen(service.port, allServe())
  await writeFile(`${service.file}.tmp`, JSON.stringify(versioned(2)))
  await rename(`${service.file}.tmp`, service.file)
  const before = await statusWhen(service.port, s => s.reloads.succeeded === 1 && allServe()(s))
  const victim = before.servingThreads[0]!.threadId
  // Under load: a client keeps asking while the thread dies and comes back.
  const control = { stop: false }
  const statuses = new Set<number>()
  const load = (async () => {
    while (!control.stop) statuses.add((await get(service.port, '/en/api/internal/explore/?limit=1').catch(() => ({ status: 0 }))).status)
  })()
  await writeFile(`${dieFile}.tmp`, String(victim))
  await rename(`${dieFile}.tmp`, dieFile)
  await service.logged(/"msg":"a serving thread stopped; starting another"/)
  const after = await statusWhen(service.port, s => s.servingThreads.every(thread => thread.threadId !== victim) && allServe()(s))
  control.stop = true
  await load
  t.equal(after.servingThreads[0]!.restarts, 1)
  t.equal(after.snapshot?.version, before.snapshot?.version, 'the new thread serves the version served before, not the first')
  t.same([...statuses].filter(status => status !== 200 && status !== 0), [], 'no answer other than 200 (a connection reset by the dying thread may happen)')
  for (let i = 0; i < 10; i++) t.match((await get(service.port, '/en/api/internal/explore/?limit=1')).body, /"v2 item/)
  // A second death with no load: the pages the thread had answered by the last scrape stay in the sum.
  const pagesIn = (metrics: string) => [...metrics.matchAll(/^explore_http_requests_total\{[^}]*route="\/:lang\/api\/internal\/explore\/"[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
  const countedBefore = pagesIn((await get(service.port, '/-/metrics')).body)
  const second = after.servingThreads[1]!.threadId
  await writeFile(`${dieFile}.tmp`, String(second))
  await rename(`${dieFile}.tmp`, dieFile)
  await statusWhen(service.port, s => s.servingThreads.every(thread => thread.threadId !== second) && allServe()(s))
  const countedAfter = pagesIn((await get(service.port, '/-/metrics')).body)
  t.ok(countedAfter >= countedBefore, `no counter of the sum goes down when a thread dies (${countedBefore} then ${countedAfter})`)
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
})

t.test('SIGTERM drains every thread: a response in flight is sent whole first', { skip }, async t => {
  // ~20 MB pages: a client that stops reading keeps its response in flight.
  const service = await startThreads(t, versioned(1, { abstract: 'x'.repeat(1024 * 1024) }))
  await statusWhen(service.port, allServe())
  const request = http.get({ port: service.port, host: '127.0.0.1', path: '/en/api/internal/explore/?limit=21', agent: false })
  const [response] = await once(request, 'response') as [http.IncomingMessage]
  response.pause()
  service.child.kill('SIGTERM')
  await service.logged(/"msg":"shutting down: no new connections; finishing requests in flight"/)
  const chunks: Buffer[] = []
  response.on('data', (chunk: Buffer) => chunks.push(chunk))
  response.resume()
  await once(response, 'end')
  const body = Buffer.concat(chunks)
  t.equal(body.length, Number(response.headers['content-length']), 'the whole page arrived')
  t.equal(await service.exited, 0, 'the process exits 0 once every thread has finished')
})

t.test('a bad first snapshot stops the service with exit 1, as with one thread', { skip }, async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'bad.json')
  await writeFile(file, '{"languages": {"en": [{"pk": 1}]}}')
  const child = spawn(process.execPath, [SERVER, '--snapshot-path', file, '--port', '0', '--workers', '2'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info' }) })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.match(stderr, /languages\.en\[0\]\.is_translated: is required/)
})

t.test('on a Node without reusePort, WORKERS=2 exits 1 and says which Node it needs', { skip: hasReusePort() && `Node ${process.versions.node} has reusePort` }, async t => {
  const child = spawn(process.execPath, [SERVER, '--port', '0', '--workers', '2'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.match(stderr, /configuration error: WORKERS=2 needs Node 22\.12 or later/)
})
