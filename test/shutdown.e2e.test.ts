// Graceful shutdown of the real process with a real request in flight: a client that has stopped
// reading a ~20 MB page keeps that response in flight for as long as it likes.
import t, { type Test } from 'tap'
import http from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { BUILT_SERVER as SERVER, childEnv, makeItem, watchOutput, writeSnapshot } from './helpers.js'

function bigSnapshot () {
  const abstract = 'x'.repeat(1024 * 1024)
  return { languages: { en: Array.from({ length: 20 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: abstract })) } }
}

async function startServer (t: Test, graceMs: number) {
  const file = await writeSnapshot(t, bigSnapshot())
  const child = spawn(process.execPath, [SERVER, '--snapshot-path', file, '--port', '0', '--shutdown-grace-ms', String(graceMs), '--watch', 'false'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() })
  const { logged, text, origin } = watchOutput(child)
  const exited = once(child, 'exit').then(([code]) => code as number)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const port = Number(new URL(await origin()).port)
  // It listens first and loads the snapshot after.
  await logged(/"msg":"snapshot loaded"/)
  return { child, exited, logged, port, log: text }
}

/** Starts a request for the whole ~20 MB page and stops reading as soon as the headers arrive. */
async function stalledRequest (port: number) {
  const request = http.get({ port, host: '127.0.0.1', path: '/en/api/internal/explore/?limit=20', agent: false })
  const [response] = await once(request, 'response') as [http.IncomingMessage]
  response.pause()
  const body = new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    response.on('data', chunk => chunks.push(chunk))
    response.on('end', () => resolve(Buffer.concat(chunks).toString()))
    response.on('error', reject)
    request.on('error', reject)
  })
  body.catch(() => {}) // the forced-exit tests expect it to fail
  return { response, body }
}

const refused = (port: number) => new Promise<boolean>(resolve => {
  const socket = connect(port, '127.0.0.1')
  socket.on('connect', () => { socket.destroy(); resolve(false) })
  socket.on('error', () => resolve(true))
})

t.test('SIGTERM: no new connections, the request in flight completes, exit 0', async t => {
  const server = await startServer(t, 10_000)
  const { response, body } = await stalledRequest(server.port)
  t.equal(response.statusCode, 200)
  const shuttingDown = server.logged(/"msg":"shutting down/)
  server.child.kill('SIGTERM')
  await shuttingDown
  // The listener closes just after that line; connections made before it are answered 503 and closed.
  let attempts = 0
  while (!await refused(server.port) && attempts < 500) attempts++
  t.ok(attempts < 500, 'new connections are refused')
  response.resume()
  const page = JSON.parse(await body) as { count: number, results: unknown[] }
  t.equal(page.results.length, 20, 'the whole page arrived')
  t.equal(await server.exited, 0)
  t.match(server.log(), /"msg":"closed"/)
})

t.test('the grace period runs out: exit 1', async t => {
  const server = await startServer(t, 300)
  await stalledRequest(server.port)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1)
  t.match(server.log(), /in-flight requests outlived the grace period/)
})

t.test('a second signal: exit 1 at once', async t => {
  const server = await startServer(t, 60_000)
  await stalledRequest(server.port)
  const shuttingDown = server.logged(/"msg":"shutting down/)
  server.child.kill('SIGTERM')
  await shuttingDown
  server.child.kill('SIGINT')
  t.equal(await server.exited, 1)
  t.match(server.log(), /second signal: exiting now/)
})

t.test('one structured log line per request, whether the route or the fast path answered it', async t => {
  const server = await startServer(t, 1000)
  const url = '/en/api/internal/explore/?limit=1&companies=1'
  // The third request for a page is answered from the page cache, before Fastify.
  for (let i = 1; i <= 3; i++) {
    const res = await fetch(`http://127.0.0.1:${server.port}${url}`)
    await res.arrayBuffer()
    await server.logged(new RegExp(`(?:"msg":"request"[^\n]*\n[^]*){${i}}`))
  }
  const lines = server.log().split('\n').filter(l => l.includes('/en/api/internal/explore/?limit=1'))
  t.equal(lines.length, 3, 'one line each, not "incoming" and "completed"')
  const entries = lines.map(line => JSON.parse(line) as Record<string, unknown>)
  for (const entry of entries) {
    t.match(entry, { level: 30, msg: 'request', reqId: /^req-/, method: 'GET', url, statusCode: 200, responseTime: Number })
  }
  t.same(Object.keys(entries[2] as object), Object.keys(entries[0] as object), 'the same fields in the same order')
  t.equal(new Set(entries.map(entry => entry.reqId)).size, 3)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})
