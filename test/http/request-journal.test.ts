// The request journal over real sockets: every answer of the public port journaled, on the fast path and the Fastify
// route alike (Node's refusals on the socket too), with its trouble and why; no credential kept; long values cut and
// said so; and its bound in count and bytes holding under 100,000 requests, attackers' among them.
import t from 'tap'
import { Agent, request as httpRequest } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import type { Journal, JournalEntry } from '../../src/schemas/request-journal.js'
import { buildTestApp, EXPLORE, rawRequest, smallSnapshot } from '../helpers.js'
import { MOST_WAITING_REQUESTS } from '../../src/http/http-server.js'

const PATHS: Array<[string, Partial<Config>]> = [['the fast path', { fastPath: true }], ['the Fastify route', { fastPath: false }]]

async function serving (t: Parameters<typeof buildTestApp>[0], overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildTestApp(t, smallSnapshot(), overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

interface Answer { status: number | null, headers: Record<string, string | string[] | undefined>, body: string, error: string | null }

/** One request on a connection of its own, however it ends. */
async function send (app: FastifyInstance, path: string, { method = 'GET', headers = {}, agent }: { method?: string, headers?: Record<string, string>, agent?: Agent } = {}): Promise<Answer> {
  const { port } = app.server.address() as { port: number }
  return await new Promise(resolve => {
    const answer: Answer = { status: null, headers: {}, body: '', error: null }
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { host: 'localhost', ...headers }, agent: agent ?? false }, res => {
      answer.status = res.statusCode ?? null
      answer.headers = res.headers
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', error => { answer.error = error.message })
      res.on('close', () => { answer.body = Buffer.concat(chunks).toString(); resolve(answer) })
    })
    req.on('error', error => { answer.error = error.message; resolve(answer) })
    req.end()
  })
}

async function journal (app: FastifyInstance, filters = ''): Promise<Journal> {
  const answer = await send(app, `/-/requests${filters}`)
  if (answer.status !== 200) throw new Error(`/-/requests${filters}: ${answer.status} ${answer.body}`)
  return JSON.parse(answer.body) as Journal
}

/** What stays the same between runs: no time, no duration. */
function lasting ({ at, durationMs, ...rest }: JournalEntry): Omit<JournalEntry, 'at' | 'durationMs'> {
  t.ok(!Number.isNaN(Date.parse(at)) && durationMs >= 0)
  return rest
}

t.test('every answer of the public port is journaled, newest first, the same on the fast path and the Fastify route', async t => {
  const seen: unknown[] = []
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, allowedHosts: ['localhost'], maxUrlLength: 256 })
    const version = app.snapshots.current()?.info.version
    const page = await send(app, `${EXPLORE}?companies=8&limit=2`, { headers: { accept: 'application/json', origin: 'http://localhost:5173' } })
    const sent: Answer[] = [
      page,
      await send(app, `${EXPLORE}?companies=8&limit=2`, { method: 'HEAD' }),
      await send(app, `${EXPLORE}?companies=8&limit=2`, { headers: { 'if-none-match': page.headers.etag as string } }),
      await send(app, '/de/api/internal/explore/'),
      await send(app, `${EXPLORE}?companies=x`),
      await send(app, '/en/api/internal/explore?limit=1'),
      await send(app, EXPLORE, { method: 'OPTIONS' }),
      await send(app, EXPLORE, { method: 'OPTIONS', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' } }),
      await send(app, EXPLORE, { method: 'POST' }),
      await send(app, '/robots.txt'),
      await send(app, EXPLORE, { headers: { host: 'evil.example' } }),
      await send(app, `${EXPLORE}?q=${'x'.repeat(300)}`)
    ]
    // Not the app's: the operator's pages.
    await send(app, '/-/status')
    await send(app, '/-/nothing-here')
    // Refused by Node's parser before either path: a head past 16 KiB, a request line that is none.
    const tooLarge = await rawRequest(app, `GET ${EXPLORE}?big=1 HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`)
    t.match(tooLarge, /^HTTP\/1\.1 431 /)
    t.match(await rawRequest(app, 'NOT A REQUEST\r\n\r\n'), /^HTTP\/1\.1 400 /)

    const { journal: state, requests } = await journal(app)
    t.same(requests.map(entry => [entry.method, entry.url, entry.status]), [
      [null, null, 400],
      ['GET', `${EXPLORE}?big=1`, 431],
      ['GET', `${EXPLORE}?q=${'x'.repeat(300)}`, 414],
      ['GET', EXPLORE, 400],
      ['GET', '/robots.txt', 404],
      ['POST', EXPLORE, 405],
      ['OPTIONS', EXPLORE, 204],
      ['OPTIONS', EXPLORE, 200],
      ['GET', '/en/api/internal/explore?limit=1', 301],
      ['GET', `${EXPLORE}?companies=x`, 400],
      ['GET', '/de/api/internal/explore/', 404],
      ['GET', `${EXPLORE}?companies=8&limit=2`, 304],
      ['HEAD', `${EXPLORE}?companies=8&limit=2`, 200],
      ['GET', `${EXPLORE}?companies=8&limit=2`, 200]
    ], `${label}: every request the app made, newest first, the operator's pages left out`)
    const byOrder = [...sent].reverse()
    for (const [i, entry] of requests.slice(2).entries()) {
      const answer = byOrder[i] as Answer
      const length = entry.method === 'HEAD' ? 0 : Buffer.byteLength(answer.body)
      t.equal(entry.bytes, length, `${label}: ${entry.method} ${entry.url}: the ${length} body bytes sent`)
      t.equal(entry.version, version, 'the version served')
      t.equal(entry.trouble, null, 'no trouble: none was asked for')
      t.equal(entry.thread, null, 'one thread')
    }
    const first = requests.at(-1) as JournalEntry
    t.same(first.headers, { host: 'localhost', accept: 'application/json', origin: 'http://localhost:5173', prefer: null, authorization: false, cookie: false })
    t.equal(first.contentType, 'application/json')
    t.same({ kept: state.kept, dropped: state.dropped, size: state.size, threads: state.threads }, { kept: 14, dropped: 0, size: 1000, threads: 1 })
    t.ok(state.bytes > 14 * 256 && state.bytes < state.maxBytes, `${state.bytes} bytes counted`)
    seen.push(requests.map(lasting))
  }
  t.same(seen[1], seen[0], 'the fast path and the Fastify route journal the same')
})

t.test('with trouble: what each page request got and why, the connection broken too', async t => {
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, chaos: true, chaosSeed: 7, delayMs: { kind: 'fixed', ms: 20 } })
    const reset = await serving(t, { ...path, fault: 'reset', chaosSeed: 7 })
    const cut = await serving(t, { ...path, fault: 'truncate', chaosSeed: 7 })
    const page = `${EXPLORE}?companies=8&limit=12`
    const whole = Buffer.byteLength((await send(app, page)).body)
    await send(app, `${page}&__status=429`)
    await send(app, page, { headers: { prefer: 'status=503, delay=30' } })
    await send(app, page)
    t.equal((await send(reset, page)).status, null, `${label}: reset`)
    t.equal((await send(cut, page)).status, 200, `${label}: cut`)

    const { requests } = await journal(app, `?path=${EXPLORE}`)
    t.same(requests.map(entry => [entry.status, entry.trouble]), [
      [200, { draw: 1, delay: { ms: 20, by: 'DELAY_MS' }, failure: null, fault: null }],
      [503, { draw: 0, delay: { ms: 30, by: 'Prefer' }, failure: { status: 503, by: 'Prefer' }, fault: null }],
      [429, { draw: 0, delay: { ms: 20, by: 'DELAY_MS' }, failure: { status: 429, by: '__status' }, fault: null }],
      [200, { draw: 0, delay: { ms: 20, by: 'DELAY_MS' }, failure: null, fault: null }]
    ], `${label}: each asking's draw, its delay and failure, and why`)
    t.ok((requests[0] as JournalEntry).durationMs >= 19, `${label}: the delay is in its duration`)
    t.same((await journal(reset)).requests.map(entry => [entry.status, entry.bytes, entry.trouble?.fault]), [[null, 0, 'reset']], `${label}: reset, no answer`)
    t.same((await journal(cut)).requests.map(entry => [entry.status, entry.bytes, entry.trouble?.fault]), [[200, Math.floor(whole / 2), 'truncate']], `${label}: half the body`)
  }
})

const SECRETS = ['s3cr3t-bearer-value', 'c00kie-value', 'q-token-value', 'k-api-key-value', 'sig-value', 'pa55w0rd', 'user-name']

t.test('no credential is kept: Authorization and Cookie values, query fields named like secrets, a URL\'s user info', async t => {
  for (const [label, path] of PATHS) {
    const app = await serving(t, path)
    await send(app, `${EXPLORE}?companies=3&token=q-token-value&API_Key=k-api-key-value&%73ignature=sig-value&limit=1`, {
      headers: { authorization: 'Bearer s3cr3t-bearer-value', cookie: 'session=c00kie-value' }
    })
    // An absolute-form target, as a proxy is sent: user info in it.
    t.match(await rawRequest(app, `GET http://user-name:pa55w0rd@localhost${EXPLORE}?limit=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`), /^HTTP\/1\.1 200 /)
    const json = (await send(app, '/-/requests')).body
    const har = (await send(app, '/-/requests.har')).body
    for (const secret of SECRETS) {
      t.notOk(json.includes(secret), `${label}: ${secret} is not in /-/requests`)
      t.notOk(har.includes(secret), `${label}: ${secret} is not in /-/requests.har`)
    }
    const [absolute, page] = (JSON.parse(json) as Journal).requests
    t.equal(page?.url, `${EXPLORE}?companies=3&token=[redacted]&API_Key=[redacted]&%73ignature=[redacted]&limit=1`, `${label}: the values redacted, the names kept`)
    t.same([page?.headers.authorization, page?.headers.cookie], [true, true], 'their presence said')
    t.equal(absolute?.url, `http://[redacted]@localhost${EXPLORE}?limit=1`)
  }
})

t.test('long values are kept cut to their bound, and the journal says so and how long they were', async t => {
  const app = await serving(t)
  // Within Node's 16 KiB of head: a 13 KiB header and a 1,800-character target.
  const accept = `application/json, ${'x'.repeat(13 * 1024)}`
  const url = `${EXPLORE}?limit=1&q=${'é'.repeat(300)}`
  await send(app, encodeURI(url), { headers: { accept, origin: `http://${'o'.repeat(400)}.test` } })
  const [entry] = (await journal(app)).requests
  t.equal(entry?.headers.accept, accept.slice(0, 256), 'Accept: its first 256 characters')
  t.equal(entry?.url, encodeURI(url).slice(0, 1024), 'the URL: its first 1,024')
  t.same(entry?.truncated, { url: encodeURI(url).length, accept: accept.length, origin: 412 }, 'each cut value, with its length as sent')
  const { journal: state } = await journal(app)
  t.ok(state.bytes < 5600, `the 13 KiB header costs the journal ${state.bytes} bytes, not its size`)
})

/** `count` requests written down one connection in batches (HTTP/1.1 pipelining), each batch's answers read before the next. */
async function pipelined (app: FastifyInstance, count: number, requestOf: (i: number) => string): Promise<void> {
  const { port } = app.server.address() as { port: number }
  const { connect } = await import('node:net')
  const socket = connect(port, '127.0.0.1')
  await new Promise(resolve => socket.once('connect', resolve))
  const BATCH = MOST_WAITING_REQUESTS
  let tail = ''
  let answered = 0
  let waiting: { until: number, resolve: () => void, reject: (error: Error) => void } | null = null
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => {
    const text = tail + chunk
    answered += (text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length
    // Shorter than a status line: none is counted twice.
    tail = text.slice(-12)
    if (waiting !== null && answered >= waiting.until) waiting.resolve()
  })
  socket.on('close', () => { waiting?.reject(new Error(`the connection closed after ${answered} answers: ${tail}`)) })
  for (let from = 0; from < count; from += BATCH) {
    const until = Math.min(count, from + BATCH)
    const done = new Promise<void>((resolve, reject) => { waiting = { until, resolve, reject } })
    socket.write(Array.from({ length: until - from }, (_, i) => requestOf(from + i)).join(''))
    await done
  }
  socket.destroy()
}

t.test('the journal\'s bound holds under 100,000 requests, attackers\' among them: its count, and its own byte count', async t => {
  const app = await serving(t, { requestJournalSize: 1000 })
  // Every other request as an attacker sends, each value just past its bound (what costs the journal most), one in
  // fifty with 12 KiB of headers.
  const hostile = (i: number): string => {
    const long = (name: string): string => `${name}: ${name.toLowerCase()[0] as string}${i % 50 === 0 ? 'x'.repeat(4096) : 'x'.repeat(300)}\r\n`
    return `Accept: application/json, ${'a'.repeat(i % 50 === 0 ? 4096 : 300)}\r\n${long('Origin')}${long('Prefer')}Cookie: c=1\r\n`
  }
  let most = 0
  await Promise.all([0, 1, 2, 3].map(async connection => await pipelined(app, 25_000, i => {
    if (i % 2500 === 0) most = Math.max(most, app.requestJournal?.tally.bytes ?? 0)
    const attack = i % 2 === 0
    return `GET ${EXPLORE}?limit=1&offset=${i % 50}${attack ? `&q=${'z'.repeat(1100)}` : ''} HTTP/1.1\r\nHost: localhost\r\n${attack ? hostile(i) : ''}\r\n`
  })))
  const journalOf = app.requestJournal
  if (journalOf === null) throw new Error('no journal')
  const { kept, bytes, dropped } = journalOf.tally
  t.ok(kept < 1000, `${kept} requests kept, fewer than 1,000: the bytes bound them first`)
  t.ok(bytes <= journalOf.maxBytes && most <= journalOf.maxBytes, `${bytes} bytes held now (${most} at most seen), of ${journalOf.maxBytes}`)
  t.equal(kept + dropped, 100_000, 'every request journaled, the oldest let go')
  const { journal: state, requests } = await journal(app)
  t.same({ kept: state.kept, bytes: state.bytes, dropped: state.dropped }, { kept, bytes, dropped }, '/-/requests says the same')
  t.ok(requests.some(entry => entry.headers.cookie && entry.truncated.accept === 4096 + 18), 'attackers\' requests among those kept, cut')
})
