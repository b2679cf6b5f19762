// The server's bounds on connections (http-server.ts): a client pipelining requests it does not read the answers of
// is cut off at MOST_PENDING_ANSWERS, one that reads is not; past MAX_CONNECTIONS a connection is closed as it comes.
import { connect, type Socket } from 'node:net'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { MOST_PENDING_ANSWERS, warnOfCuts } from '../../src/http/http-server.js'
import type { Config } from '../../src/config.js'
import { buildTestApp, EXPLORE } from '../helpers.js'

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
  t.test(`${path}: a client that pipelines more than ${MOST_PENDING_ANSWERS} requests without reading is cut off`, async t => {
    const { app, warnings } = await listening(t, overrides)
    const socket = await connected(app)
    // Not read until the server has closed it: the answers wait in the server, as an attacker's would.
    socket.pause()
    const closed = new Promise(resolve => socket.once('close', resolve))
    socket.on('error', () => {})
    socket.write(Array.from({ length: 1000 }, (_, i) => pageRequest(i % 20)).join(''))
    const cut = readUntil(socket)
    socket.resume()
    await closed
    const { statuses } = await cut
    t.ok(statuses < MOST_PENDING_ANSWERS, `${statuses} answers sent, not 1,000`)
    t.same(warnings, [{ closed: { maxConnections: 0, unreadAnswers: 1 } }], 'one warning, counting the cut')
    // The server goes on.
    const after = await connected(app)
    after.write(pageRequest(0))
    t.same(await readUntil(after, 1), { statuses: 1, closed: false }, 'another connection is answered')
    after.destroy()
  })

  t.test(`${path}: ${MOST_PENDING_ANSWERS} pipelined requests in one write are all answered`, async t => {
    const { app, warnings } = await listening(t, overrides)
    const socket = await connected(app)
    socket.write(Array.from({ length: MOST_PENDING_ANSWERS }, (_, i) => pageRequest(i)).join(''))
    t.same(await readUntil(socket, MOST_PENDING_ANSWERS), { statuses: MOST_PENDING_ANSWERS, closed: false })
    // And as many again on the same connection once read.
    socket.write(Array.from({ length: MOST_PENDING_ANSWERS }, (_, i) => pageRequest(i)).join(''))
    t.same(await readUntil(socket, MOST_PENDING_ANSWERS), { statuses: MOST_PENDING_ANSWERS, closed: false })
    socket.destroy()
    t.same(warnings, [])
  })
}

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
  t.same(warnings, [{ closed: { maxConnections: 1, unreadAnswers: 0 } }])
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

t.test('cuts are warned of once a minute at most, each warning counting those since the last', async t => {
  const warnings: object[] = []
  let now = 1_000_000
  t.teardown(() => { Date.now = realNow })
  const realNow = Date.now
  Date.now = () => now
  const cut = warnOfCuts({ warn: fields => warnings.push(fields) })
  cut('unreadAnswers')
  cut('maxConnections')
  cut('maxConnections')
  now += 59_999
  cut('unreadAnswers')
  t.same(warnings, [{ closed: { maxConnections: 0, unreadAnswers: 1 } }])
  now += 1
  cut('maxConnections')
  t.same(warnings[1], { closed: { maxConnections: 3, unreadAnswers: 1 } }, 'the minute\'s cuts, that one included')
})
