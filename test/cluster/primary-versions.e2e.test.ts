// WORKERS=2 and the operator's versions: the primary keeps the versions and holds the pin; an
// action reaching either worker is carried out by the primary on every worker. The real entry point, its
// processes and sockets; what is awaited is what they log.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import http from 'node:http'
import { once } from 'node:events'
import { rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { childEnv, eventually, tempDir, versioned, watchOutput, type SnapshotDoc } from '../helpers.js'

const SERVER = join(import.meta.dirname, '..', '..', 'src', 'server.ts')
const TOKEN = 'a-token-for-the-tests-0123456789'

/** `source`: SNAPSHOT_URL's flags, served instead of the file (its STATE_DIR then in the cache). */
async function startCluster (t: Test, doc: SnapshotDoc, source: string[] = []) {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(doc))
  const where = source.length > 0 ? source : ['--snapshot-path', file, '--state-dir', join(dir, 'state')]
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, ...where, '--port', '0', '--ops-port', '0', '--workers', '2', '--reload-debounce-ms', '50'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info', OPS_TOKEN: TOKEN }) })
  const { logged, text } = watchOutput(child)
  const exited = once(child, 'exit').then(([code]) => code as number)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await logged(/"msg":"console"/, 2)
  const ops = Number(/"url":"http:\/\/127\.0\.0\.1:(\d+)\/-\/","msg":"console"/.exec(text())?.[1])
  return { child, exited, logged, file, ops: `http://127.0.0.1:${ops}`, log: text }
}

async function save (file: string, doc: SnapshotDoc): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(doc))
  await rename(`${file}.tmp`, file)
}

async function act (ops: string, action: string): Promise<{ status: number, body: any }> {
  const res = await fetch(`${ops}/-/${action}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })
  return { status: res.status, body: await res.json() }
}

interface Workers { cluster: { workers: Array<{ version: string | null }> }, pin: { version: string } | null, newest: unknown, source: { etag: string | null } | null }

/** /-/status until `ready` holds of it: each look is one more request (the primary shares what it knows as it learns it). */
async function statusWhen (ops: string, ready: (status: Workers) => boolean): Promise<Workers> {
  return await eventually(`a status with ${ready.toString()}`, async () => {
    const status = await (await fetch(`${ops}/-/status`)).json() as Workers
    return ready(status) ? status : undefined
  })
}

t.test('a rollback through either worker serves the previous version on every worker; the pin holds a newer file back; unpin loads it', async t => {
  const cluster = await startCluster(t, versioned(1))
  await cluster.logged(/"msg":"served version kept"/)
  await save(cluster.file, versioned(2))
  await cluster.logged(/"msg":"served version kept"/, 2)
  // Kept once one worker has loaded it; the other may still be loading (seen on CI): wait for both.
  const newest = (await (await fetch(`${cluster.ops}/-/versions`)).json() as any).kept[0].version
  await statusWhen(cluster.ops, status => status.cluster.workers.length === 2 && status.cluster.workers.every(worker => worker.version === newest))

  const listed = await (await fetch(`${cluster.ops}/-/versions`)).json() as any
  t.equal(listed.kept.length, 2, 'the primary kept both, once each')
  const [v2, v1] = listed.kept.map((kept: { version: string }) => kept.version)
  t.equal(listed.served.version, v2)
  t.same(listed.served.items, { en: 22 })

  const rolled = await act(cluster.ops, 'rollback')
  t.equal(rolled.status, 200)
  t.equal(rolled.body.served.version, v1)
  // Answered once every worker serves it: each request, whichever worker takes it, is answered from v1.
  for (let i = 0; i < 8; i++) {
    const status = await (await fetch(`${cluster.ops}/-/status`)).json() as Workers
    t.same(status.cluster.workers.map(worker => worker.version), [v1, v1], `status ${i}: both workers serve v1`)
    t.equal(status.pin?.version, v1)
  }
  await cluster.logged(/"msg":"operator action carried out by every worker: rollback"/)
  t.match(cluster.log(), new RegExp(`"client":"127\\.0\\.0\\.1","action":"rollback","from":"${v2}","to":"${v1}"`), 'the worker logs who, what, from and to')

  await save(cluster.file, versioned(3))
  await cluster.logged(/"msg":"the snapshot file changed; pinned, so it is not loaded"/)
  // The primary logs, then tells every worker over IPC: the worker that answers may hear it a moment later.
  const held = await statusWhen(cluster.ops, status => status.newest !== null)
  t.same(held.cluster.workers.map(worker => worker.version), [v1, v1], 'the newer file is not loaded')
  t.match(held.newest, { source: cluster.file, etag: null })
  t.match(await (await fetch(`${cluster.ops}/-/metrics`)).text(), `explore_snapshot_pinned{version="${v1}"} 1`)

  const unpinned = await act(cluster.ops, 'unpin')
  t.equal(unpinned.status, 200)
  t.equal(unpinned.body.served.generatedAt, versioned(3).generated_at, 'the newest file, at once')
  const after = await (await fetch(`${cluster.ops}/-/status`)).json() as Workers
  t.equal(new Set(after.cluster.workers.map(worker => worker.version)).size, 1)
  t.equal(after.pin, null)
  for (let i = 0; i < 4; i++) t.match(await (await fetch(`${cluster.ops}/en/api/internal/explore/?limit=1`)).text(), /"v3 item/)

  cluster.child.kill('SIGTERM')
  t.equal(await cluster.exited, 0)
})

t.test('with SNAPSHOT_URL: a rollback costs no download in the cluster, and a restarted cluster keeps the pin', async t => {
  let body = JSON.stringify(versioned(1))
  let sent = 0
  const etag = () => `"${body.length}-${body.charCodeAt(60)}"`
  const publisher = http.createServer((request, response) => {
    if (request.headers['if-none-match'] === etag()) return response.writeHead(304).end()
    if (request.method === 'GET') sent++
    response.writeHead(200, { etag: etag(), 'content-length': Buffer.byteLength(body) }).end(request.method === 'HEAD' ? undefined : body)
  })
  publisher.listen(0, '127.0.0.1')
  await once(publisher, 'listening')
  t.teardown(() => new Promise(resolve => { publisher.closeAllConnections(); publisher.close(resolve) }))
  const url = `http://127.0.0.1:${(publisher.address() as { port: number }).port}/snapshot.json`
  const dir = await tempDir(t)
  const args = ['--snapshot-url', url, '--snapshot-cache-dir', join(dir, 'cache'), '--snapshot-poll-seconds', '3600']

  const first = await startCluster(t, versioned(1), args)
  // A check ends once the primary has shared the source's status (a SIGHUP during a check joins it).
  await statusWhen(first.ops, status => status.source?.etag === etag())
  body = JSON.stringify(versioned(2))
  first.child.kill('SIGHUP')
  await statusWhen(first.ops, status => status.source?.etag === etag())
  t.equal(sent, 2)
  t.equal(((await (await fetch(`${first.ops}/-/versions`)).json()) as any).kept.length, 2, 'both kept')
  const rolled = await act(first.ops, 'rollback')
  t.equal(rolled.status, 200)
  t.equal(rolled.body.served.generatedAt, versioned(1).generated_at)
  t.equal(sent, 2, 'no download')
  body = JSON.stringify(versioned(3))
  first.child.kill('SIGHUP')
  await first.logged(/"msg":"a newer object is published; pinned, so it is not loaded"/)
  const held = await (await fetch(`${first.ops}/-/status`)).json() as Workers
  t.same(held.cluster.workers.map(worker => worker.version), [rolled.body.served.version, rolled.body.served.version], 'still the pinned version everywhere')
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0)

  const again = await startCluster(t, versioned(1), args)
  // The workers load what the primary tells them once both listen: the pinned version's kept file.
  const status = await statusWhen(again.ops, status => status.cluster.workers.length === 2 && status.cluster.workers.every(worker => worker.version !== null))
  t.same(status.cluster.workers.map(worker => worker.version), [rolled.body.served.version, rolled.body.served.version], 'the pinned version everywhere after the restart')
  t.equal(status.pin?.version, rolled.body.served.version, 'the pin survives the restart')
  for (let i = 0; i < 4; i++) t.match(await (await fetch(`${again.ops}/en/api/internal/explore/?limit=1`)).text(), /"v1 item/)
  const unpinned = await act(again.ops, 'unpin')
  t.equal(unpinned.body.served.generatedAt, versioned(3).generated_at, 'unpin: the cached copy, then the newer object')
  again.child.kill('SIGTERM')
  t.equal(await again.exited, 0)
})
