// The HTTP server's bounds: on connections, on the requests one may have waiting, and on a request's time.
import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { MOST_WAITING_REQUESTS, warnOfCuts } from '../../src/http/http-server.js'
import type { Config } from '../../src/config.js'
import { buildTestApp, EXPLORE, makeItem, readAnswers } from '../helpers.js'

// src/http/http-server.ts: pipelined requests answered one at a time; a client too far ahead, or past MAX_CONNECTIONS, cut off.
const PATHS: Array<[string, Partial<Config>]> = [['the fast path', { fastPath: true }], ['the Fastify route', { fastPath: false }]]

async function listening (t: Parameters<typeof buildTestApp>[0], overrides: Partial<Config>): Promise<{ app: FastifyInstance, warnings: object[] }> {
  const app = await buildTestApp(t, undefined, overrides)
  const warnings: object[] = []
  app.log.warn = ((fields: object) => { warnings.push(fields) }) as typeof app.log.warn
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, warnings }
}

async function connected (app: FastifyInstance): Promise<Socket> {
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  await new Promise(resolve => socket.once('connect', resolve))
  return socket
}

/** What the server sends from now until it closes the connection, or until `answers` status lines have come. */
async function readUntil (socket: Socket, answers = Infinity): Promise<{ statuses: number, closed: boolean }> {
  let text = ''
  const count = (): number => (text.match(/HTTP\/1\.1 200 /g) ?? []).length
  return await new Promise(resolve => {
    const done = (closed: boolean): void => {
      socket.off('data', read).off('close', close)
      resolve({ statuses: count(), closed })
    }
    const read = (chunk: string): void => {
      text += chunk
      if (count() >= answers) done(false)
    }
    const close = (): void => { done(true) }
    socket.setEncoding('latin1')
    socket.on('data', read).on('close', close).on('error', () => {})
  })
}

const pageRequest = (offset: number): string => `GET ${EXPLORE}?limit=2&offset=${offset} HTTP/1.1\r\nHost: localhost\r\n\r\n`

for (const [path, overrides] of PATHS) {
  t.test(`${path}: a client that sends more than ${MOST_WAITING_REQUESTS} requests ahead of their answers is cut off`, async t => {
    const { app, warnings } = await listening(t, overrides)
    const socket = await connected(app)
    socket.write(Array.from({ length: 1000 }, (_, i) => pageRequest(i % 20)).join(''))
    const { statuses, closed } = await readUntil(socket, 1000)
    t.ok(closed, 'closed by the server')
    t.ok(statuses <= MOST_WAITING_REQUESTS, `${statuses} answers sent, not 1,000`)
    t.same(warnings, [{ closed: { maxConnections: 0, waitingRequests: 1 } }], 'one warning, counting the cut')
    // The server goes on.
    const after = await connected(app)
    after.write(pageRequest(0))
    t.same(await readUntil(after, 1), { statuses: 1, closed: false }, 'another connection is answered')
    after.destroy()
  })

  t.test(`${path}: ${MOST_WAITING_REQUESTS} pipelined requests in one write are all answered, and again`, async t => {
    const { app, warnings } = await listening(t, overrides)
    const socket = await connected(app)
    for (let round = 0; round < 2; round++) {
      socket.write(Array.from({ length: MOST_WAITING_REQUESTS }, (_, i) => pageRequest(i)).join(''))
      t.same(await readUntil(socket, MOST_WAITING_REQUESTS), { statuses: MOST_WAITING_REQUESTS, closed: false })
    }
    socket.destroy()
    t.same(warnings, [])
  })
}

t.test('pipelined requests are answered one at a time: those behind an answer the client has not read wait unanswered', async t => {
  // A page of 100 items of 100 KB: 10 MB, more than the sockets' buffers hold while the client does not read.
  const en = Array.from({ length: 100 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: 'x'.repeat(100_000) }))
  const app = await buildTestApp(t, { languages: { en } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  let answered = 0
  app.fastPath?.onAnswer(() => { answered++ })
  const socket = await connected(app)
  socket.pause()
  const first = once(app.server, 'request')
  socket.write(Array.from({ length: 8 }, () => `GET ${EXPLORE}?limit=100 HTTP/1.1\r\nHost: localhost\r\n\r\n`).join(''))
  const [, response] = await first as [unknown, ServerResponse]
  // The first answer is written in the turn it is asked for; a few more turns for anything else to happen.
  for (let turn = 0; turn < 20; turn++) await new Promise(resolve => setImmediate(resolve))
  t.equal(response.writableFinished, false, 'the first answer has not all gone to the kernel')
  t.equal(answered, 1, 'the seven behind it are not made')
  socket.resume()
  const bodies = (await readAnswers(socket, 8)).length
  socket.destroy()
  t.equal(answered, 8)
  t.equal(bodies, 8, 'all eight, once read')
})

t.test('past MAX_CONNECTIONS a connection is closed as it comes; once one ends, another is served', async t => {
  const { app, warnings } = await listening(t, { maxConnections: 2 })
  const first = await connected(app)
  const second = await connected(app)
  for (const socket of [first, second]) {
    socket.write(pageRequest(0))
    t.same(await readUntil(socket, 1), { statuses: 1, closed: false }, 'within the limit: answered')
  }
  const third = await connected(app)
  third.write(pageRequest(0))
  t.same(await readUntil(third), { statuses: 0, closed: true }, 'the third: closed unanswered')
  t.same(warnings, [{ closed: { maxConnections: 1, waitingRequests: 0 } }])
  first.destroy()
  await t.resolveMatch(eventuallyServed(app), true, 'a new connection, once the first is gone')
  second.destroy()
})

/** The server counts a connection gone once its close is handled: asked again until a new one is answered. */
async function eventuallyServed (app: FastifyInstance): Promise<boolean> {
  for (;;) {
    const socket = await connected(app)
    socket.write(pageRequest(0))
    const { statuses } = await readUntil(socket, 1)
    socket.destroy()
    if (statuses === 1) return true
  }
}

t.test('cuts are warned of once a minute at most; those after a warning are counted in the next, at the minute\'s end', async t => {
  const warnings: object[] = []
  let told: () => void = () => {}
  // A "minute" of 500 ms: a loaded machine may stall the test between its calls, never that long.
  const cut = warnOfCuts({ warn: fields => { warnings.push(fields); told() } }, 500)
  cut('waitingRequests')
  t.same(warnings, [{ closed: { maxConnections: 0, waitingRequests: 1 } }], 'the first at once')
  const next = new Promise<void>(resolve => { told = resolve })
  cut('maxConnections')
  cut('maxConnections')
  cut('waitingRequests')
  t.equal(warnings.length, 1, 'not again within the minute')
  // The warning's timer does not hold a process open: this does, while the test waits for it.
  const open = setInterval(() => {}, 1000)
  await next
  clearInterval(open)
  t.same(warnings[1], { closed: { maxConnections: 2, waitingRequests: 1 } }, 'the minute\'s cuts, told at its end')
})

// REQUEST_TIMEOUT_MS (server-options.ts): a request not whole within it is answered 408, near that time, not at Node's 30 s check.
t.test('a request still coming after REQUEST_TIMEOUT_MS is answered 408, near that time, and closed', async t => {
  const app = await buildTestApp(t, undefined, { requestTimeoutMs: 300 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const started = Date.now()
  // A header every 100 ms, as a slow client sends them: never the blank line that ends the request.
  socket.write('GET /en/api/internal/explore/ HTTP/1.1\r\nHost: localhost\r\n')
  const dribble = setInterval(() => { socket.write('X-a: b\r\n') }, 100)
  t.teardown(() => { clearInterval(dribble); socket.destroy() })
  let answer = ''
  socket.on('data', chunk => { answer += String(chunk) })
  socket.on('error', () => {})
  await once(socket, 'close')
  const took = Date.now() - started
  t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*Connection: close\r\n\r\n\{"detail":/)
  // Node's own check, every 30 s, answered a 2 s timeout at 30 s; a 300 ms one is checked every 75 ms.
  t.ok(took < 10_000, `answered after ${took} ms, not at Node's 30 s check`)
})
