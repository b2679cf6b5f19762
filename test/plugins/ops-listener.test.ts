// OPS_PORT: the /-/ pages on a listener of their own, the API alone on the public port; unset, both share it.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { writeFile } from 'node:fs/promises'
import { get, type IncomingMessage } from 'node:http'
import { buildTestApp, EXPLORE, rawRequest, reloadFile } from '../helpers.js'

async function listening (app: FastifyInstance): Promise<{ api: string, ops: string | null }> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const api = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const ops = app.ops === null ? null : `http://127.0.0.1:${(await app.ops.listen()).port}`
  return { api, ops }
}

const OPS_PATHS = ['/-/status', '/-/healthz', '/-/readyz', '/-/metrics', '/-/docs', '/-/openapi.json']

t.test('with OPS_PORT: the public port answers the API and nothing under /-/; the operator\'s port both', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0, opsHost: '127.0.0.1' })
  const { api, ops } = await listening(app)
  if (ops === null) throw new Error('no operator listener')

  const page = await fetch(`${api}${EXPLORE}?limit=2`)
  t.equal(page.status, 200, 'the API on the public port')
  t.equal(((await page.json()) as { count: number }).count, 25)

  const unknown = await fetch(`${api}/no-such-page/`)
  const unknownBody = await unknown.text()
  for (const path of OPS_PATHS) {
    const onPublic = await fetch(`${api}${path}`)
    t.equal(onPublic.status, 404, `${path}: not on the public port`)
    t.equal(await onPublic.text(), unknownBody, `${path}: the public port's 404 is the one of any unknown path`)
    const onOps = await fetch(`${ops}${path}`, { redirect: 'manual' })
    t.ok(onOps.status === 200 || onOps.status === 302, `${path}: on the operator's port (${onOps.status})`)
    await onOps.arrayBuffer()
  }
  // Other spellings the router takes to the same routes.
  for (const path of ['/%2D/status', '/%2d/healthz', '/%2D/']) {
    const onPublic = await fetch(`${api}${path}`)
    t.equal(onPublic.status, 404, `${path}: not on the public port either`)
    await onPublic.arrayBuffer()
  }
  const absolute = await rawRequest(app, 'GET http://127.0.0.1/-/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
  t.match(absolute, /^HTTP\/1\.1 404 /, 'an absolute-form target on the public port: 404')

  const status = (await (await fetch(`${ops}/-/status`)).json()) as { path: string }
  t.equal(status.path, app.snapshots.file, 'the operator\'s status names the file')

  // The console's preview pages through the API from its own origin.
  const apiOnOps = await fetch(`${ops}${EXPLORE}?limit=2`)
  t.equal(apiOnOps.status, 200, 'the API on the operator\'s port too')
  t.equal(((await apiOnOps.json()) as { next: string }).next, `${ops}${EXPLORE}?limit=2&offset=2`, 'its links on that port')
})

t.test('without OPS_PORT: the /-/ pages stay on the main port beside the API', async t => {
  const app = await buildTestApp(t)
  t.equal(app.ops, null)
  const { api } = await listening(app)
  for (const path of ['/-/status', '/-/healthz', '/-/metrics']) {
    const res = await fetch(`${api}${path}`)
    t.equal(res.status, 200, path)
    await res.arrayBuffer()
  }
})

t.test('closing the app closes the operator\'s listener too', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0 })
  const { ops } = await listening(app)
  await app.close()
  await t.rejects(fetch(`${ops}/-/healthz`), 'nothing listens on the operator\'s port any more')
})

t.test('the operator\'s pages carry no CORS headers: a script on another site cannot read them', async t => {
  const app = await buildTestApp(t)
  for (const url of ['/-/status', '/-/', '/-/metrics', '/-/healthz']) {
    const res = await app.inject({ url, headers: { origin: 'https://elsewhere.example' } })
    t.equal(res.headers['access-control-allow-origin'], undefined, url)
  }
  const page = await app.inject({ url: `${EXPLORE}?limit=1`, headers: { origin: 'https://elsewhere.example' } })
  t.equal(page.headers['access-control-allow-origin'], '*', 'the API keeps its CORS')
})

t.test('ALLOWED_HOSTS holds the public port, not the operator\'s, which probes reach by address', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0, allowedHosts: ['news.example.com'] })
  const { api, ops } = await listening(app)
  const page = await fetch(`${api}${EXPLORE}`)
  t.equal(page.status, 400, 'the public port refuses a Host it does not list')
  await page.arrayBuffer()
  const probe = await fetch(`${ops}/-/readyz`)
  t.equal(probe.status, 200, 'a probe by address on the operator\'s port')
  await probe.arrayBuffer()
})

t.test('the operator\'s port refuses a request Node cannot parse as the main port does: JSON, no bare status', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0 })
  const { ops } = await listening(app)
  const { port } = new URL(ops ?? '')
  const { createConnection } = await import('node:net')
  const socket = createConnection(Number(port), '127.0.0.1')
  socket.end('GET /-/status HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')
  let answer = ''
  for await (const chunk of socket) answer += String(chunk)
  t.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*\r\n\r\n\{"detail":"Bad Request\."\}$/)
})

/** Status and body of `path` asked of `base` with these headers (node:http: fetch will not send its own Host). */
async function ask (base: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    get(`${base}${path}`, { headers }, resolve).on('error', reject)
  })
  let body = ''
  for await (const chunk of response) body += String(chunk)
  return `${response.statusCode ?? 0} ${body}`
}

const OPS_HOST_REFUSED = '400 {"detail":"Invalid Host header: the operator\'s pages answer localhost, an IP address or a name in OPS_ALLOWED_HOSTS."}'

t.test('without OPS_PORT on an address other than loopback: PORT serves the API and the probes; every other /-/ page is an unknown path', async t => {
  const hidden = ['/-/status', '/-/', '/-/versions', '/-/metrics', '/-/docs', '/-/openapi.json', '/-/console.js', '/%2D/status']
  for (const host of ['0.0.0.0', '::', '192.0.2.10', 'replica.example']) {
    const app = await buildTestApp(t, undefined, { host })
    const { api } = await listening(app)
    const unknown = await ask(api, '/no-such-page/')
    for (const path of hidden) t.equal(await ask(api, path), unknown, `HOST=${host}: ${path}`)
    t.equal(await ask(api, '/-/healthz'), '200 {"status":"ok"}', `HOST=${host}: the liveness probe`)
    t.equal(await ask(api, '/-/readyz'), '200 {"status":"ready"}', `HOST=${host}: the readiness probe`)
    t.match(await ask(api, `${EXPLORE}?limit=1`), /^200 \{"count":25,/, `HOST=${host}: the API`)
  }
  const exposed = await buildTestApp(t, undefined, { host: '0.0.0.0', exposeOpsPages: true })
  const { api } = await listening(exposed)
  for (const path of ['/-/status', '/-/versions', '/-/metrics']) t.match(await ask(api, path), /^200 /, `EXPOSE_OPS_PAGES=true: ${path}`)
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) {
    const app = await buildTestApp(t, undefined, { host })
    t.equal((await app.inject('/-/status')).statusCode, 200, `HOST=${host}: loopback keeps them all`)
  }
})

t.test('a probe on a public address says a reload failed, not what the refused file holds', async t => {
  const app = await buildTestApp(t, undefined, { host: '0.0.0.0' })
  const { api } = await listening(app)
  await writeFile(app.snapshots.file, '{"languages": {"en": [{"pk": "S3cr3t-fragment"}]}}')
  t.equal(await reloadFile(app), 'failed')
  t.equal(await ask(api, '/-/readyz'), '200 {"status":"ready","reason":"serving the last good snapshot: the last reload failed"}')
  const local = await buildTestApp(t, undefined, { host: '127.0.0.1' })
  await writeFile(local.snapshots.file, '{"languages": {"en": [{"pk": "S3cr3t-fragment"}]}}')
  await reloadFile(local)
  t.match((await local.inject('/-/readyz')).json().reason, /failed: snapshot\.json/, 'on loopback, the problem too')
})

t.test('the operator\'s port answers a loopback name, an IP address or OPS_ALLOWED_HOSTS: any other Host (DNS rebinding) is refused', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0, opsAllowedHosts: ['ops.internal', '.svc.cluster.local'] })
  const { ops } = await listening(app)
  const port = new URL(ops ?? '').port
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `10.1.2.3:${port}`, '192.0.2.7', `[fd00::7]:${port}`, 'ops.internal', `replica.ns.svc.cluster.local:${port}`, 'app.localhost']) {
    t.match(await ask(ops ?? '', '/-/status', { host }), /^200 /, `Host: ${host}`)
  }
  for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.nip.io:${port}`, 'ops.internal.evil.example']) {
    for (const path of ['/-/status', '/-/versions', '/-/readyz', `${EXPLORE}?limit=1`, '/no-such-page/']) {
      t.equal(await ask(ops ?? '', path, { host }), OPS_HOST_REFUSED, `Host: ${host}, ${path}`)
    }
  }
})

t.test('without OPS_PORT, the operator\'s pages on PORT refuse a foreign Host too; the API and the probes do not', async t => {
  const app = await buildTestApp(t)
  const { api } = await listening(app)
  const host = 'rebound.evil.example'
  for (const path of ['/-/status', '/-/', '/-/versions', '/-/metrics', '/-/docs']) t.equal(await ask(api, path, { host }), OPS_HOST_REFUSED, path)
  t.match(await ask(api, `${EXPLORE}?limit=1`, { host }), /^200 \{"count":25,"next":"http:\/\/rebound\.evil\.example\//, 'the API answers any host ALLOWED_HOSTS lets in')
  t.equal(await ask(api, '/-/healthz', { host }), '200 {"status":"ok"}')
})

t.test('TRUST_PROXY does not reach the operator\'s port: its links and Host check are the request\'s own', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0, trustProxy: true })
  const { ops } = await listening(app)
  const forwarded = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }
  const page = await fetch(`${ops}${EXPLORE}?limit=1`, { headers: forwarded })
  t.match((await page.json() as { next: string }).next, `${ops}${EXPLORE}?limit=1&offset=1`)
})

t.test('the operator\'s port holds MAX_CONNECTIONS and the pipelining bound too', async t => {
  const app = await buildTestApp(t, undefined, { opsPort: 0, opsHost: '127.0.0.1', maxConnections: 1 })
  const { ops } = await listening(app)
  const { connect } = await import('node:net')
  const { port } = new URL(ops as string)
  const opened = async (): Promise<import('node:net').Socket> => {
    const socket = connect(Number(port), '127.0.0.1')
    await new Promise(resolve => socket.once('connect', resolve))
    socket.on('error', () => {})
    return socket
  }
  const first = await opened()
  const closedAtOnce = await opened()
  await new Promise(resolve => closedAtOnce.once('close', resolve))
  t.pass('a second connection is closed as it comes')
  // The first, past 16 requests waiting: cut.
  first.write('GET /-/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(100))
  await new Promise(resolve => first.once('close', resolve))
  t.pass('a client with 100 requests ahead of their answers is cut off')
})
