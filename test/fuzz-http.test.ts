// Fuzzes a listening app over raw sockets with requests an HTTP client library would never send (odd
// targets, methods and headers, bodies, pipelining), so that the fast path in front of Fastify, Node's own
// parser and the client error handler are reached too (fuzz.test.ts goes through inject, which reaches
// none of them). Whatever arrives: no 5xx, no stack trace or file path in a body, every JSON body parses,
// and the server keeps answering.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../src/config.js'
import { unquotePlus } from '../src/explore/query-string.js'
import { buildTestApp, makeItem, smallSnapshot } from './helpers.js'
import { runs } from './property-runs.js'

// What a stack trace, a file path or an internal message would look like in a body.
const LEAK_MARKERS = ['    at ', 'node_modules', '/work/', 'file://', 'Error:', '.ts:', 'FST_', 'ERR_']
// The snapshot lives under the temporary directory: /-/status names its path on purpose, no error may.
const ERROR_LEAK_MARKERS = [...LEAK_MARKERS, '/tmp/', 'snapshot.json']

// ---------------------------------------------------------------------------------------------------
// Requests, as bytes

interface RawRequest {
  method: string
  target: string
  version: 'HTTP/1.1' | 'HTTP/1.0'
  headers: Array<[string, string]>
  body: { framing: 'length' | 'chunked', data: string } | null
  /** Copies sent back to back on one connection (pipelined); the last asks to close it. */
  copies: number
}

const printable = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map(c => String.fromCharCode(c)), maxLength })
// Visible ASCII, spaces and tabs: what a header value may hold.
const headerText = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map(c => String.fromCharCode(c)), maxLength })
const token = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&\'*+-.^_`|~'), minLength: 1, maxLength: 12 })

const method = fc.oneof(
  { weight: 16, arbitrary: fc.constantFrom('GET', 'GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'POST') },
  { weight: 2, arbitrary: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'PURGE', 'SEARCH', 'CONNECT') },
  // Not methods Node's parser knows: it refuses them.
  { weight: 1, arbitrary: fc.constantFrom('get', 'FOO', 'G', 'GETS', 'BREW') }
)

const language = fc.constantFrom('en', 'en', 'es', 'fr', 'xx', 'EN', '%65n', 'a'.repeat(120), '', '..')

const field = fc.oneof(
  fc.constantFrom('companies=7', 'companies=8', 'companies=', 'companies=x', 'companies=9&companies=7', 'limit=3', 'limit=%2B2', 'limit=%D9%A3',
    'offset=2', 'offset=99999999999999999999999', 'format=json', 'format=api', 'x=%zz', 'é=ü', '%', '=', '&', 'a+b=%2B', 'q=%E2%80%A8'),
  fc.tuple(printable(8), printable(12)).map(([k, v]) => `${k.replace(/[#&=]/g, '')}=${v.replace(/[#&]/g, '')}`)
    // A page's links repeat the query's fields: one that spells a marker (ERR_, %45RR_) is the client's, no leak.
    .filter(field => !ERROR_LEAK_MARKERS.some(marker => field.includes(marker) || unquotePlus(field).includes(marker)))
)

const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.array(field, { maxLength: 6 }).map(fields => `?${fields.join('&')}`) },
  // Around the 1000-field limit.
  { weight: 1, arbitrary: fc.integer({ min: 990, max: 1010 }).map(n => `?${Array.from({ length: n }, () => 'a=1').join('&')}`) }
)

const target = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(language, query).map(([lang, q]) => `/${lang}/api/internal/explore/${q}`) },
  { weight: 2, arbitrary: fc.tuple(language, query).map(([lang, q]) => `/${lang}/api/internal/explore${q}`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('*', '/', '//', '/-/healthz', '/-/readyz', '/-/status', '/-/metrics', '/-/openapi.json', '/-/docs',
      '/%zz', '/%', '/%00', '/en/api/internal/explore/#frag', '/en/api/internal/explore/;x=1', '/en/api/internal/explore%2F',
      '/en/api/internal/explore/../explore/', '/./en/api/internal/explore/', 'http://replica.test/en/api/internal/explore/?limit=1',
      'https://evil.test/en/api/internal/explore/', 'replica.test:80', '/' + 'a/'.repeat(3000))
  },
  // Past the 8 KiB limit on the target (414), and just under it.
  { weight: 1, arbitrary: fc.integer({ min: 8100, max: 8300 }).map(n => `/en/api/internal/explore/?x=${'y'.repeat(n - 29)}`) },
  { weight: 3, arbitrary: printable(40).map(text => `/${text}`) },
  // Raw bytes above ASCII in the target: Node's parser refuses them before Fastify sees anything.
  { weight: 1, arbitrary: fc.constantFrom('/en/api/internal/explore/?q=\u00e9', '/\u00ff', '/en/api/internal/explore/?companies=\u00b2') }
)

const header: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<[string, string]>(['Accept', '*/*'], ['Accept', 'application/json; indent=2'], ['Accept', 'text/html'], ['Accept', ''], ['accept', 'application/json;indent="3"']) },
  { weight: 2, arbitrary: fc.constantFrom<[string, string]>(['Origin', 'https://a.example'], ['Origin', 'null'], ['Access-Control-Request-Method', 'GET'], ['Access-Control-Request-Headers', 'x-y']) },
  { weight: 2, arbitrary: fc.constantFrom<[string, string]>(['X-Forwarded-Proto', 'https'], ['X-Forwarded-Proto', 'gopher, https'], ['X-Forwarded-Host', 'news.example.com'], ['X-Forwarded-Host', 'bad_host'], ['X-Forwarded-For', '1.2.3.4, ::1']) },
  { weight: 3, arbitrary: fc.constantFrom<[string, string]>(['If-None-Match', '*'], ['If-None-Match', '*'], ['If-None-Match', '"x", W/"y"'], ['If-None-Match', ''], ['If-Modified-Since', 'yesterday'], ['Range', 'bytes=0-10']) },
  { weight: 1, arbitrary: fc.constantFrom<[string, string]>(['Expect', '100-continue'], ['Expect', 'teapot'], ['Upgrade', 'websocket'], ['Content-Type', 'application/json'], ['Content-Type', 'text/plain; charset=nope'], ['Accept-Encoding', 'gzip, br'], ['Transfer-Encoding', 'gzip']) },
  { weight: 1, arbitrary: fc.constantFrom<[string, string]>(['Content-Length', 'abc'], ['Content-Length', '-1'], ['X-Long', 'v'.repeat(17_000)]) },
  { weight: 2, arbitrary: fc.tuple(token, headerText(60)) }
)

const host = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Array<[string, string]>>([['Host', 'replica.test']]) },
  { weight: 1, arbitrary: fc.constant<Array<[string, string]>>([]) },
  { weight: 1, arbitrary: fc.constant<Array<[string, string]>>([['Host', 'replica.test'], ['Host', 'replica.test']]) },
  { weight: 2, arbitrary: fc.constantFrom('bad_host', '', 'a b', '[::1]:80', 'x.test:99999', 'é.test', 'HOST.TEST.').map(value => [['Host', value]] as Array<[string, string]>) }
)

const rawHttpRequest: fc.Arbitrary<RawRequest> = fc.record({
  method,
  target,
  version: fc.constantFrom<RawRequest['version']>('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'),
  headers: fc.tuple(host, fc.array(header, { maxLength: 5 })).map(([h, rest]) => [...h, ...rest]),
  body: fc.option(fc.record({ framing: fc.constantFrom<'length' | 'chunked'>('length', 'chunked'), data: fc.constantFrom('{broken', '{"a":1}', 'a=1&b=2', 'x'.repeat(3000)) }), { nil: null, freq: 4 }),
  copies: fc.integer({ min: 1, max: 3 })
})

/** A request for each status the generators reach, some in a few hundred runs only: each run meets them all. */
const EVERY_STATUS: RawRequest[] = ([
  ['GET', '/en/api/internal/explore/?limit=1', []],
  ['GET', '/en/api/internal/explore?limit=1', []],
  ['GET', '/en/api/internal/explore/?limit=1', [['If-None-Match', '*']]],
  ['GET', '/en/api/internal/explore/?companies=x', []],
  ['GET', '/xx/api/internal/explore/', []],
  ['PUT', '/en/api/internal/explore/', []],
  ['GET', '/en/api/internal/explore/', [['Accept', 'text/html']]],
  ['GET', `/en/api/internal/explore/?x=${'y'.repeat(8200)}`, []],
  ['GET', '/en/api/internal/explore/', [['X-Long', 'v'.repeat(17_000)]]]
] satisfies Array<[string, string, Array<[string, string]>]>).map(([method, target, headers]) => ({
  method, target, version: 'HTTP/1.1', headers: [['Host', 'replica.test'], ...headers], body: null, copies: 1
}))

/** The bytes of one copy: `close` asks for the connection to end after it. */
function bytesOf (req: RawRequest, close: boolean): Buffer {
  const lines = [`${req.method} ${req.target} ${req.version}`, ...req.headers.map(([name, value]) => `${name}: ${value}`)]
  lines.push(`Connection: ${close ? 'close' : 'keep-alive'}`)
  let body = ''
  if (req.body !== null) {
    const length = Buffer.byteLength(req.body.data)
    if (req.body.framing === 'length') {
      lines.push(`Content-Length: ${length}`)
      body = req.body.data
    } else {
      lines.push('Transfer-Encoding: chunked')
      body = `${length.toString(16)}\r\n${req.body.data}\r\n0\r\n\r\n`
    }
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'latin1')
}

// ---------------------------------------------------------------------------------------------------
// Answers

interface ParsedAnswer {
  status: number
  headers: Map<string, string>
  body: Buffer
}

/** Everything the server sent on one connection until it closed it; rejects if it does not within 5 s. */
function exchange (port: number, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes))
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the connection was still open after 5 s; received ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 300))}`))
    }, 5_000)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks))
    })
    // A server that refuses a request may reset the connection while the request is still being sent.
    socket.on('error', () => {})
  })
}

/** Splits a stream of HTTP/1.x answers (to requests of `method`) into answers; throws on bad framing. */
function parseAnswers (stream: Buffer, method: string): ParsedAnswer[] {
  const answers: ParsedAnswer[] = []
  let at = 0
  while (at < stream.length) {
    const end = stream.indexOf('\r\n\r\n', at)
    if (end < 0) throw new Error(`an answer without the end of its head: ${JSON.stringify(stream.subarray(at, at + 200).toString('latin1'))}`)
    const [statusLine, ...lines] = stream.subarray(at, end).toString('latin1').split('\r\n')
    const status = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine as string)
    if (status === null) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`)
    const headers = new Map<string, string>()
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim())
    }
    at = end + 4
    const code = Number(status[1])
    if (code === 100) continue
    let body: Buffer
    if (method === 'HEAD' || code === 204 || code === 304) {
      body = Buffer.alloc(0)
    } else if (headers.get('transfer-encoding') === 'chunked') {
      const parts: Buffer[] = []
      for (;;) {
        const lineEnd = stream.indexOf('\r\n', at)
        const size = parseInt(stream.subarray(at, lineEnd).toString('latin1'), 16)
        if (lineEnd < 0 || Number.isNaN(size)) throw new Error('a chunked body that does not parse')
        at = lineEnd + 2
        if (size === 0) {
          at += 2
          break
        }
        parts.push(stream.subarray(at, at + size))
        at += size + 2
      }
      body = Buffer.concat(parts)
    } else if (headers.has('content-length')) {
      const length = Number(headers.get('content-length'))
      if (at + length > stream.length) throw new Error(`a body shorter than its Content-Length ${length}`)
      body = stream.subarray(at, at + length)
      at += length
    } else {
      body = stream.subarray(at)
      at = stream.length
    }
    answers.push({ status: code, headers, body })
  }
  return answers
}

/** What is wrong with an answer, or null. */
function problemWith (answer: ParsedAnswer): string | null {
  if (answer.status >= 500) return 'a 5xx'
  const text = answer.body.toString('utf8')
  const type = answer.headers.get('content-type') ?? ''
  const json = type.startsWith('application/json')
  // Swagger UI's own scripts (a 200 from /-/docs) may well say "Error:"; every other body is checked.
  if (json || answer.status >= 300) {
    const marker = (answer.status >= 400 ? ERROR_LEAK_MARKERS : LEAK_MARKERS).find(m => text.includes(m))
    if (marker !== undefined) return `the body contains ${JSON.stringify(marker)}`
  }
  if (json && answer.body.length > 0) {
    try {
      JSON.parse(text)
    } catch {
      return 'a JSON answer whose body does not parse'
    }
  }
  return null
}

// ---------------------------------------------------------------------------------------------------
// The property

async function listening (t: Test, overrides: Partial<Config>): Promise<{ app: FastifyInstance, port: number }> {
  const doc = smallSnapshot()
  doc.languages.en!.push(makeItem(26, '2024-01-06', [7], { translated_title: 'Nestlé \u2028 😀' }))
  const app = await buildTestApp(t, doc, overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port }
}

/** A plain request on a fresh connection still gets its answer. */
async function stillAnswers (port: number): Promise<string | null> {
  const stream = await exchange(port, Buffer.from('GET /en/api/internal/explore/?limit=1 HTTP/1.1\r\nHost: replica.test\r\nConnection: close\r\n\r\n'))
  const [answer] = parseAnswers(stream, 'GET')
  if (answer?.status !== 200) return `a plain page request then got ${JSON.stringify(stream.toString('latin1').slice(0, 200))}`
  return (JSON.parse(answer.body.toString('utf8')) as { count: number }).count === 26 ? null : 'a plain page request then got a wrong page'
}

const shown = (req: RawRequest) => JSON.stringify(bytesOf(req, true).toString('latin1').slice(0, 500))

async function fuzz (t: Test, overrides: Partial<Config>, numRuns: number): Promise<void> {
  const { port } = await listening(t, overrides)
  const statuses = new Map<number, number>()
  let answers = 0
  const property = fc.asyncProperty(rawHttpRequest, async req => {
    const copies = Array.from({ length: req.copies }, (_, i) => bytesOf(req, i === req.copies - 1))
    const stream = await exchange(port, Buffer.concat(copies))
    let parsed: ParsedAnswer[]
    try {
      parsed = parseAnswers(stream, req.method)
    } catch (error) {
      throw new Error(`${shown(req)}: ${(error as Error).message}`)
    }
    // Node drops a CONNECT (no 'connect' listener) without a word; anything else gets an answer.
    if (parsed.length === 0 && req.method !== 'CONNECT') throw new Error(`${shown(req)}: no answer at all`)
    if (parsed.length > req.copies) throw new Error(`${shown(req)}: ${parsed.length} answers to ${req.copies} requests`)
    for (const answer of parsed) {
      answers++
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
      const problem = problemWith(answer)
      if (problem !== null) throw new Error(`${shown(req)}: ${problem} (status ${answer.status}, body ${JSON.stringify(answer.body.toString('utf8').slice(0, 300))})`)
    }
    const after = await stillAnswers(port)
    if (after !== null) throw new Error(`after ${shown(req)}: ${after}`)
  })
  // fast-check counts the examples among the runs.
  const details = await fc.check(property, { numRuns: numRuns + EVERY_STATUS.length, examples: EVERY_STATUS.map(req => [req]) })
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    t.fail(`${error}\n${fc.defaultReportMessage(details) ?? ''}`)
    return
  }
  t.pass(`${details.numRuns} raw exchanges, ${answers} answers: no 5xx, no leak, JSON bodies parse, the server kept answering`)
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
  // The fast path's pages, the route's refusals and the parser's, each met (EVERY_STATUS at least).
  for (const status of [200, 301, 304, 400, 404, 405, 406, 414, 431]) t.ok((statuses.get(status) ?? 0) > 0, `some answers were ${status}`)
  t.equal(await stillAnswers(port), null, 'a plain page request is answered at the end')
}

t.test('raw requests to the default configuration: no 5xx, no leak, JSON parses, still answering', async t => {
  await fuzz(t, {}, runs(600))
})

t.test('raw requests with CORS limited to a listed origin and proxies trusted: the same', async t => {
  await fuzz(t, { corsOrigin: ['https://a.example'], trustProxy: true, cacheMaxAge: 60 }, runs(500))
})

// ---------------------------------------------------------------------------------------------------
// Problems the fuzz found, each pinned by a test of its own.

t.test('one request, one answer: a body that cannot be framed after the answer went out gets no second answer', async t => {
  const { port } = await listening(t, {})
  // Transfer-Encoding without chunked: the body runs to the end of the connection, which ends it too soon.
  const stream = await exchange(port, Buffer.from('PUT / HTTP/1.1\r\nHost: replica.test\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n'))
  const answers = parseAnswers(stream, 'PUT')
  t.equal(answers[0]?.status, 404)
  t.equal(answers.length, 1, `one answer: ${JSON.stringify(stream.toString('latin1'))}`)
})

t.test('Expect: 100-continue, pipelined: no interim answer, and no answer cut into by one', async t => {
  const { port } = await listening(t, {})
  const copy = (connection: string) => `GET /en/api/internal/explore/?limit=1 HTTP/1.1\r\nHost: replica.test\r\nExpect: 100-continue\r\nConnection: ${connection}\r\n\r\n`
  const stream = await exchange(port, Buffer.from(copy('keep-alive') + copy('close')))
  t.notMatch(stream.toString('latin1'), /100 Continue/, 'no interim answer (Node wrote one into the previous answer)')
  // Node closes a connection whose client was told nothing about the body it may still send: the first
  // answer says so, and the client sends the second request again on a new connection.
  const answers = parseAnswers(stream, 'GET')
  t.same(answers.map(answer => answer.status), [200], JSON.stringify(stream.toString('latin1').slice(0, 600)))
  t.equal(answers[0]?.headers.get('connection'), 'close')
  t.match(JSON.parse(answers[0]?.body.toString() ?? '{}'), { count: Number, results: Array })
})

t.test('a request without Host, or with an unknown Expect, is served as Django serves it', async t => {
  const { port } = await listening(t, {})
  const cases: Array<[string, RegExp]> = [
    // Django builds links with the server's own name and port.
    ['GET /en/api/internal/explore/?limit=1 HTTP/1.1', /^http:\/\/127\.0\.0\.1:\d+\/en\/api\/internal\/explore\/\?limit=1&offset=1$/],
    ['GET /en/api/internal/explore/?limit=1 HTTP/1.1\r\nHost: replica.test\r\nExpect: teapot', /^http:\/\/replica\.test\/en\//]
  ]
  for (const [head, next] of cases) {
    const [answer] = parseAnswers(await exchange(port, Buffer.from(`${head}\r\nConnection: close\r\n\r\n`)), 'GET')
    t.equal(answer?.status, 200, head)
    t.match(JSON.parse(answer?.body.toString() ?? '{}').next, next, `links: ${head}`)
  }
})
