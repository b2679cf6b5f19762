// OPS_PORT: the /-/ pages on a listener of their own, the API alone on the public port; unset, both share it.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, EXPLORE, rawRequest } from '../helpers.js'

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
