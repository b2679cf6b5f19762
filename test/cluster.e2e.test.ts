// WORKERS=2: the real entry point as a primary and two workers (node:cluster), each a process of its own.
// What is awaited is what the processes log, never a fixed delay.
import t, { type Test } from 'tap'
import http from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, readdir, readlink, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { hasReusePort } from '../src/cluster/port-sharing.js'
import { childEnv, eventually, freePort, tempDir, versioned, watchOutput, type SnapshotDoc } from './helpers.js'

const SERVER = join(import.meta.dirname, '..', 'src', 'server.ts')

async function startCluster (t: Test, doc: SnapshotDoc, extra: string[] = []) {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(doc))
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, '--snapshot-path', file, '--port', '0', '--workers', '2', '--reload-debounce-ms', '50', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info' }) })
  const { logged, text } = watchOutput(child)
  const exited = once(child, 'exit').then(([code]) => code as number)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await logged(/"msg":"snapshot loaded"/, 2)
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(text())?.[1])
  return { child, exited, logged, port, file, dir, log: text }
}

async function get (port: number, path: string): Promise<{ status: number, body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: res.status, body: await res.text() }
}

interface ClusterStatus { cluster: { workers: Array<{ id: number, pid: number, version: string | null, lastReload: string | null }> } }

/** /-/status until `ready` holds of it (each worker's report reaches the others through the primary). */
async function statusWhen (port: number, ready: (status: ClusterStatus) => boolean): Promise<ClusterStatus> {
  // The primary shares each report as it comes; another request asks again after it.
  return await eventually(`a status with ${ready.toString()}`, async () => {
    const status = JSON.parse((await get(port, '/-/status')).body) as ClusterStatus
    return ready(status) ? status : undefined
  })
}

t.test('two workers share the port; status and metrics show the whole cluster; a reload reaches both', async t => {
  const cluster = await startCluster(t, versioned(1))
  const status = await statusWhen(cluster.port, s => s.cluster.workers.length === 2 && s.cluster.workers.every(w => w.version !== null))
  const pids = status.cluster.workers.map(w => w.pid)
  t.equal(new Set(pids).size, 2, 'two worker processes')
  t.notOk(pids.includes(cluster.child.pid as number), 'neither is the primary')
  t.equal(new Set(status.cluster.workers.map(w => w.version)).size, 1, 'both serve the same version')

  for (let i = 0; i < 20; i++) t.equal((await get(cluster.port, '/en/api/internal/explore/?limit=1')).status, 200)
  const metrics = (await get(cluster.port, '/-/metrics')).body
  const requests = [...metrics.matchAll(/^explore_http_requests_total\{[^}]*route="\/:lang\/api\/internal\/explore\/"[^}]*status="200"[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
  t.equal(requests, 20, 'the cluster\'s metrics count every worker\'s answers')
  t.match(metrics, /^explore_snapshot_items\{language="en"\} 21$/m, 'snapshot figures are not summed across workers')
  const { version } = JSON.parse(await readFile(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }
  t.same(metrics.split('\n').filter(line => line.startsWith('explore_build_info')), [`explore_build_info{version="${version}",node="${process.version}"} 1`],
    'the build once in the scrape, not once a worker')

  await writeFile(`${cluster.file}.tmp`, JSON.stringify(versioned(2)))
  await rename(`${cluster.file}.tmp`, cluster.file)
  await cluster.logged(/"msg":"snapshot reloaded"/, 2)
  const after = await statusWhen(cluster.port, s => s.cluster.workers.length === 2 && s.cluster.workers.every(w => w.lastReload === 'loaded'))
  t.equal(new Set(after.cluster.workers.map(w => w.version)).size, 1)
  t.not(after.cluster.workers[0]!.version, status.cluster.workers[0]!.version, 'both serve the new file')
  for (let i = 0; i < 4; i++) t.match((await get(cluster.port, '/en/api/internal/explore/?limit=1')).body, /"v2 item/)
  t.match((await get(cluster.port, '/-/metrics')).body, /^explore_snapshot_reloads_total\{outcome="success"\} 1$/m,
    'one reload of the cluster counts once, not once a worker')

  cluster.child.kill('SIGHUP')
  await cluster.logged(/"msg":"snapshot reloaded"/, 4)
  t.pass('SIGHUP to the primary reloads every worker')
})

/** The processes among `pids` that hold a socket listening on `port` (Linux: /proc/net/tcp* and each one's fds). */
async function listening (port: number, pids: readonly number[]): Promise<number[]> {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await readFile(table, 'utf8')).split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      // local_address is ADDRESS:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      if (fields[3] === '0A' && parseInt(fields[1]?.split(':')[1] ?? '', 16) === port) inodes.add(fields[9] as string)
    }
  }
  const holders: number[] = []
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`)
    const links = await Promise.all(fds.map(async fd => await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')))
    if (links.some(link => inodes.has(/^socket:\[(\d+)\]$/.exec(link)?.[1] ?? ''))) holders.push(pid)
  }
  return holders.sort((a, b) => a - b)
}

t.test('on a fixed port each worker binds it itself where Node has reusePort; on Node 20 the primary holds it for them', { skip: process.platform !== 'linux' && 'reads /proc to see who holds the sockets' }, async t => {
  const [port, opsPort] = [await freePort(), await freePort()]
  const cluster = await startCluster(t, versioned(1), ['--port', String(port), '--ops-port', String(opsPort)])
  // /-/ pages are on the operator's port.
  const status = await statusWhen(opsPort, s => s.cluster.workers.length === 2 && s.cluster.workers.every(w => w.version !== null))
  const workers = status.cluster.workers.map(w => w.pid).sort((a, b) => a - b)
  const primary = cluster.child.pid as number
  const expected = hasReusePort() ? workers : [primary]
  t.same(await listening(port, [primary, ...workers]), expected, `the API's port is held by ${hasReusePort() ? 'each worker' : 'the primary'} on Node ${process.versions.node}`)
  t.same(await listening(opsPort, [primary, ...workers]), expected, 'so is the operator\'s port')
  // Whoever holds the sockets, both ports answer.
  t.equal((await get(port, '/en/api/internal/explore/?limit=1')).status, 200)
  t.equal((await get(opsPort, '/-/readyz')).status, 200)
  cluster.child.kill('SIGTERM')
  t.equal(await cluster.exited, 0)
})

t.test('a worker killed with SIGKILL is started again', async t => {
  const cluster = await startCluster(t, versioned(1))
  const status = await statusWhen(cluster.port, s => s.cluster.workers.length === 2 && s.cluster.workers.every(w => w.version !== null))
  const victim = status.cluster.workers[0]!.pid
  process.kill(victim, 'SIGKILL')
  await cluster.logged(/"msg":"a worker died; starting another"/)
  await cluster.logged(/"msg":"snapshot loaded"/, 3)
  const after = await statusWhen(cluster.port, s => s.cluster.workers.length === 2 && s.cluster.workers.every(w => w.version !== null && w.pid !== victim))
  t.equal(after.cluster.workers.length, 2)
  t.equal((await get(cluster.port, '/en/api/internal/explore/?limit=1')).status, 200)
})

t.test('SIGTERM ends every worker, and a response in flight is sent whole first', async t => {
  // ~20 MB pages: a client that stops reading keeps its response in flight.
  const cluster = await startCluster(t, versioned(1, { abstract: 'x'.repeat(1024 * 1024) }))
  const request = http.get({ port: cluster.port, host: '127.0.0.1', path: '/en/api/internal/explore/?limit=21', agent: false })
  const [response] = await once(request, 'response') as [http.IncomingMessage]
  response.pause()
  cluster.child.kill('SIGTERM')
  await cluster.logged(/"msg":"shutting down: every worker finishes its requests in flight"/)
  const chunks: Buffer[] = []
  response.on('data', (chunk: Buffer) => chunks.push(chunk))
  response.resume()
  await once(response, 'end')
  const body = Buffer.concat(chunks)
  t.equal(body.length, Number(response.headers['content-length']), 'the whole page arrived')
  t.equal((JSON.parse(body.toString()) as { results: unknown[] }).results.length, 21)
  t.equal(await cluster.exited, 0, 'the primary exits 0 once every worker has')
})

t.test('a bad first snapshot stops the cluster with exit 1, as it stops a single process', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'bad.json')
  await writeFile(file, '{"languages": {"en": [{"pk": 1}]}}')
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, '--snapshot-path', file, '--port', '0', '--workers', '2'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info' }) })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += chunk })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.match(stderr, /languages\.en\[0\]\.is_translated: is required/)
})

t.test('with SNAPSHOT_URL the primary follows the source once, and every worker serves each new object', async t => {
  let body = JSON.stringify(versioned(1))
  const gets: string[] = []
  const etag = () => `"${body.length}-${body.charCodeAt(60)}"`
  const publisher = http.createServer((request, response) => {
    if (request.method === 'GET') gets.push(request.headers['if-none-match'] ?? '')
    if (request.headers['if-none-match'] === etag()) return response.writeHead(304).end()
    response.writeHead(200, { etag: etag(), 'content-length': Buffer.byteLength(body) }).end(request.method === 'HEAD' ? undefined : body)
  })
  publisher.listen(0, '127.0.0.1')
  await once(publisher, 'listening')
  t.teardown(() => new Promise(resolve => { publisher.closeAllConnections(); publisher.close(resolve) }))
  const url = `http://127.0.0.1:${(publisher.address() as { port: number }).port}/snapshot.json`
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, '--snapshot-url', url, '--snapshot-cache-dir', await tempDir(t), '--snapshot-poll-seconds', '3600', '--port', '0', '--workers', '2'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info' }) })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const { logged, text } = watchOutput(child)
  await logged(/"msg":"snapshot reloaded"/, 2)
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(text())?.[1])
  const first = await statusWhen(port, s => s.cluster.workers.length === 2 && s.cluster.workers.every(w => w.version !== null))
  t.equal(new Set(first.cluster.workers.map(w => w.version)).size, 1, 'both workers serve the download')
  t.same(gets, [''], 'one download for the whole cluster')
  // The primary shares the source's status after each check, with the next table of workers.
  const status = await statusWhen(port, s => (s as unknown as { source: { etag: string | null } | null }).source?.etag != null) as unknown as { source: { url: string, etag: string } }
  t.match(status.source, { url, etag: etag() }, 'any worker shows the source the primary follows')
  t.match((await get(port, '/-/metrics')).body, /^explore_snapshot_source_checks_total\{outcome="ok"\} 1$/m, 'and counts its checks once')

  body = JSON.stringify(versioned(2))
  child.kill('SIGHUP')
  await logged(/"msg":"snapshot reloaded"/, 4)
  const second = await statusWhen(port, s => s.cluster.workers.every(w => w.version !== null && w.version !== first.cluster.workers[0]!.version))
  t.equal(new Set(second.cluster.workers.map(w => w.version)).size, 1)
  t.equal(gets.length, 2, 'and one download of the new object')
  for (let i = 0; i < 4; i++) t.match((await get(port, '/en/api/internal/explore/?limit=1')).body, /"v2 item/)
  child.kill('SIGTERM')
  t.equal((await once(child, 'exit'))[0], 0)
})
