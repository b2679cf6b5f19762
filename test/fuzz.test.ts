// Fuzzes the whole HTTP surface through app.inject: whatever a client sends, no 5xx, no leaked internals, every answer in its documented shape.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { InjectOptions } from 'fastify'
import { TypeCompiler } from '@sinclair/typebox/compiler'
// Registers the `date` format before the page schema is compiled; without it every item would fail.
import '../src/schemas/formats.js'
import { ExplorePageSchema } from '../src/schemas/explore-response.js'
import { buildTestApp, rawRequest } from './helpers.js'
import { runs } from './property-runs.js'

const pageCheck = TypeCompiler.Compile(ExplorePageSchema)

// What a stack trace, a file path or an internal message would look like in a body.
const LEAK_MARKERS = ['    at ', 'node_modules', '/work/', 'Error:']

// Django's DATA_UPLOAD_MAX_NUMBER_FIELDS; the limit docs/reference/http-api.md documents, restated so the test does not
// trust the code it checks.
const MAX_FIELDS = 1000

type Method = 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE'

interface FuzzRequest {
  method: Method
  url: string
  accept: string | undefined
  payload: string | undefined
}

const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength })

// The language segment: the snapshot's own, ones it lacks, ones that are not languages at all, and
// percent-encodings that decode (or fail to decode) into any of those.
const language = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('en', 'es', 'fr') },
  { weight: 2, arbitrary: fc.constantFrom('de', 'xx', 'pt-br', 'zh-hans', 'en-gb') },
  {
    weight: 3,
    arbitrary: fc.constantFrom('EN', 'En', 'e', 'eng', 'english', 'en-', 'en_us', 'pt-brazil', '-', '', '.', '..',
      '%65n', 'e%6E', '%zz', '%', '%FF', '%C3%A9', 'é', '%00', 'en%2Fes', 'en%2f', '%2F', '12', 'e n', '__proto__')
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(101), 'a'.repeat(3000)) }
)

const path = fc.oneof(
  { weight: 10, arbitrary: language.map(lang => `/${lang}/api/internal/explore/`) },
  { weight: 2, arbitrary: language.map(lang => `/${lang}/api/internal/explore`) },
  {
    weight: 2,
    arbitrary: fc.tuple(language, fc.constantFrom('%2F', '%2f', '//', '/extra/', '/..', '%', '%zz', '/%C3%A9', '/./'))
      .map(([lang, tail]) => `/${lang}/api/internal/explore${tail}`)
  },
  { weight: 2, arbitrary: fc.constantFrom('/-/status', '/-/healthz', '/-/status/', '/-/healthz?', '/-/STATUS') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('/', '/en', '/en/', '/en/api/', '/en/api/internal/', '/api/internal/explore/',
      '/favicon.ico', '/%zz', '/%', '/%FF', '/%C3%A9', '/-/', '/-', '//', '/en/api/internal/explore/../explore/',
      '/en//api/internal/explore/', '/en/api/internal/%65xplore/', '/%2e%2e/%2e%2e/etc/passwd', '/en/api/internal/explore/?')
  },
  {
    weight: 1,
    arbitrary: fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constantFrom('%zz', '%', '%2F', '-', 'api')), { minLength: 1, maxLength: 5 })
      .map(segments => `/${segments.join('/')}`)
  }
)

const key = fc.oneof(
  // `format` and `companies` refuse most values (404, 400): rarer, so that many requests reach a page.
  { weight: 8, arbitrary: fc.constantFrom('companies', 'limit', 'limit', 'offset', 'offset', 'format') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', 'compan%69es', 'COMPANIES', 'limit%00', 'q', 'zeta', '%zz', '%', '%FF', 'caf%C3%A9',
      'café', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'a+b', 'limit[]', '%26', '%3D')
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) }
)

const value = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 40 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('7', '8', '9', '0', '00', '007') },
  // Past 2^53 and past any integer type: 30 to 60 digits.
  { weight: 2, arbitrary: digits(30, 60) },
  { weight: 2, arbitrary: fc.integer({ min: -1_000_000, max: -1 }).map(String) },
  { weight: 2, arbitrary: fc.double().map(String) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('+', '-', '%2B', '%2D', '%2b', ' ', '%20', '+%2B', '--', '0x', '.'), digits(1, 8))
      .map(([sign, number]) => sign + number)
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom('', '%zz', '%', '%F', '%FF', '%C3%A9', '%C3', '%2F', '%2f', '%00', '%EF%BC%91', '%E2%80%A8',
      '%ED%A0%80', '%F0%9F%98%80', '1%2C2', '7,8', '0x10', '1_000', '1e3', '٣', '１', 'NaN', 'Infinity', 'true', 'null',
      'json', 'api', 'JSON', 'xml', 'json%00', 'jso%6E', ' json', '7%00')
  },
  // Unicode: percent-encoded as clients send it, and raw (inject encodes what a socket could not carry).
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }).map(encodeURIComponent) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  // Several KB: the longest ones take the target past the 8 KiB URL limit.
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 2_000, max: 9_000 }), fc.constantFrom('7', 'a', '%C3%A9', '%zz', 'é'))
      .map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)))
  }
)

const field = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}=${v}`) },
  { weight: 1, arbitrary: key },
  {
    weight: 2,
    arbitrary: fc.constantFrom('companies=&companies=7&limit=&limit=5', 'limit=5&limit=', 'offset=3&offset=x', 'companies=7&companies=7',
      'format=json', 'format=', 'format=api', 'format=JSON', 'format=json&format=api', 'format=api&format=json', 'format',
      '=', '==', '=7', '&', '&&', 'limit==5', 'companies=7=8', 'companies')
  }
)

// A run of short fields whose count straddles MAX_FIELDS; short enough to stay under the URL limit.
const manyFields = fc.tuple(
  fc.integer({ min: MAX_FIELDS - 10, max: MAX_FIELDS + 10 }),
  fc.constantFrom('a=1', 'companies=7', '', 'limit=5', 'b', 'x=%zz', 'é', 'offset=')
).map(([n, f]) => Array.from({ length: n }, () => f).join('&'))

const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constant('?') },
  { weight: 12, arbitrary: fc.array(field, { maxLength: 12 }).map(fields => `?${fields.join('&')}`) },
  { weight: 1, arbitrary: manyFields.map(q => `?${q}`) }
)

const method = fc.constantFrom<Method>('GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE')

const accept = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('*/*', 'application/json', 'text/html', '', ' ', 'application/json; indent=4', 'application/json; indent=0',
      'application/json; indent=-3', `application/json; indent=${'9'.repeat(35)}`, 'application/json; indent=1_0',
      'application/json; indent="4"', 'application/json; indent="', 'application/json; indent=\t8 ', 'application/json;;;',
      ';', ',', ',,,', '*', '*/', '/', 'application', 'application/*; indent=2', '*/*; q=0', 'text/html,*/*;q=0.8',
      'application/json; indent=4, text/html', 'APPLICATION/JSON; INDENT=2', 'application/xml', 'image/*',
      'application/json; charset=utf-8', '"application/json"', 'application/json; indent=1e3', 'application/json; q="a;b"; indent=3',
      'application/json; indent=é', '*/json', 'application/json/x')
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) }
)

const payload = fc.option(fc.constantFrom('{broken', '', '{"a":1}', 'a=1&b=2'), { nil: undefined })

const request = fc.record({ method, url: fc.tuple(path, query).map(([p, q]) => p + q), accept, payload })

// The explore view's path as Django matches it: percent-decoded, with its trailing slash.
function isExplorePath (url: string): boolean {
  const mark = url.indexOf('?')
  try {
    return /^\/[^/]+\/api\/internal\/explore\/$/.test(decodeURIComponent(mark < 0 ? url : url.slice(0, mark)))
  } catch {
    return false
  }
}

const app = await buildTestApp(t)

// What the answers were, per subtest, so it can check its generators still reach every kind of answer
// (a change that stopped them would make the properties vacuous).
const seenStatuses = new Set<number>()
let validPages = 0
function resetCounts (): void {
  seenStatuses.clear()
  validPages = 0
}

/**
 * The answer to one request, and the target the server saw. inject normalises the target as a client library
 * would (raw unicode encoded, a fragment dropped), and refuses one the WHATWG URL parser refuses (`/\\?`:
 * a backslash is a slash there, and `//` starts a host): that one is sent as bytes on a socket, as a client
 * that sends what it is given would (fast-check found it, seed 1463584862).
 */
async function answerTo (req: FuzzRequest, options: InjectOptions): Promise<{ statusCode: number, headers: Record<string, unknown>, body: string, seen: string }> {
  let res
  try {
    res = await app.inject(options)
  } catch (error) {
    if (!(error instanceof TypeError) || !/Invalid URL/.test(error.message)) throw error
    const body = req.payload !== undefined && (req.method === 'POST' || req.method === 'DELETE') ? req.payload : ''
    const head = [`${req.method} ${req.url} HTTP/1.1`, 'Host: replica.test', 'Connection: close', ...(req.accept === undefined ? [] : [`Accept: ${req.accept}`]), ...(body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body)}`])]
    const raw = await rawRequest(app, `${head.join('\r\n')}\r\n\r\n${body}`)
    const end = raw.indexOf('\r\n\r\n')
    const [status, ...fields] = raw.slice(0, end).split('\r\n')
    const headers = Object.fromEntries(fields.map(line => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
    const sent = raw.slice(end + 4)
    return { statusCode: Number(status?.split(' ')[1]), headers, body: headers['transfer-encoding'] === 'chunked' ? unchunked(sent) : sent, seen: req.url }
  }
  return { statusCode: res.statusCode, headers: res.headers, body: res.body, seen: res.raw.req.url ?? req.url }
}

/** A chunked body's data (HTTP/1.1 chunked transfer coding, no trailers); chunk sizes count bytes. */
function unchunked (text: string): string {
  const bytes = Buffer.from(text)
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const line = bytes.indexOf('\r\n', at)
    const size = line < 0 ? 0 : parseInt(bytes.subarray(at, line).toString('latin1'), 16)
    // The last chunk, or a body cut short or malformed: what came so far.
    if (!(size > 0)) return Buffer.concat(parts).toString()
    parts.push(bytes.subarray(line + 2, line + 2 + size))
    at = line + 2 + size + 2
  }
}

/** Sends one request; resolves with what is wrong with the answer, or null. */
async function problemWith (req: FuzzRequest): Promise<{ seen: string, problem: string } | null> {
  const options: InjectOptions = { method: req.method, url: req.url }
  if (req.accept !== undefined) options.headers = { accept: req.accept }
  if (req.payload !== undefined && (req.method === 'POST' || req.method === 'DELETE')) options.payload = req.payload
  const res = await answerTo(req, options)
  const seen = res.seen
  seenStatuses.add(res.statusCode)
  const fail = (problem: string) => ({ seen, problem: `${problem} (status ${res.statusCode}, body ${JSON.stringify(res.body.slice(0, 300))})` })

  if (res.statusCode >= 500) return fail('a 5xx')
  const marker = LEAK_MARKERS.find(m => res.body.includes(m))
  if (marker !== undefined) return fail(`the body contains ${JSON.stringify(marker)}`)
  if (res.statusCode === 301 && (typeof res.headers.location !== 'string' || res.headers.location === '')) {
    return fail('a 301 without a Location header')
  }
  if (res.statusCode >= 400 && req.method !== 'HEAD') {
    let body: unknown
    try {
      body = JSON.parse(res.body)
    } catch {
      return fail('a 4xx whose body is not JSON')
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('a 4xx whose body is not a JSON object')
  }
  if (res.statusCode === 200 && req.method === 'GET' && isExplorePath(seen)) {
    let body: unknown
    try {
      body = JSON.parse(res.body)
    } catch {
      return fail('a 200 page that is not JSON')
    }
    if (!pageCheck.Check(body)) {
      const first = pageCheck.Errors(body).First()
      return fail(`a 200 page invalid against ExplorePageSchema at ${first?.path ?? '?'}: ${first?.message ?? '?'}`)
    }
    validPages++
  }
  return null
}

// A URL of several KB would drown the message; the counterexample fast-check prints has it whole.
const shown = (url: string) => url.length <= 400 ? url : `${url.slice(0, 400)}… (${url.length} characters)`

/** The property as fast-check sees it: throws with the method and the URL, which survive shrinking. */
async function holds (req: FuzzRequest): Promise<void> {
  const found = await problemWith(req)
  if (found !== null) {
    const url = found.seen === req.url ? shown(req.url) : `${shown(req.url)} (seen as ${shown(found.seen)})`
    throw new Error(`${req.method} ${url} accept=${JSON.stringify(req.accept)}: ${found.problem}`)
  }
}

/** Runs a property and reports the shrunk failure, with the request that caused it, as one tap failure. */
async function check (t: Test, property: fc.IAsyncProperty<[FuzzRequest]>, numRuns: number): Promise<void> {
  const details = await fc.check(property, { numRuns })
  if (!details.failed) {
    t.pass(`${details.numRuns} generated requests`)
    return
  }
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
  t.fail(`${error}\n${fc.defaultReportMessage(details) ?? ''}`)
}

t.test('any method, path, query and Accept header: no 5xx, no leak, JSON errors, valid pages', async t => {
  resetCounts()
  await check(t, fc.asyncProperty(request, holds), runs(12_000))
  for (const status of [200, 301, 400, 404, 405, 406, 414]) t.ok(seenStatuses.has(status), `some request got a ${status}`)
  t.ok(validPages >= 300, `${validPages} pages checked against the response schema`)
})

t.test('targets the URL parser refuses (a backslash after the first slash) are answered, not a failure of the client', async t => {
  for (const url of ['/\\?', '/\\', '/\\en/api/internal/explore/']) {
    t.equal(await problemWith({ method: 'GET', url, accept: '*/*', payload: undefined }), null, url)
    t.equal((await answerTo({ method: 'GET', url, accept: undefined, payload: undefined }, { method: 'GET', url })).statusCode, 404, `${url}: 404, no such path or language`)
  }
})

t.test('GET on the explore path with hostile query strings', async t => {
  const explore = fc.record({
    method: fc.constant<Method>('GET'),
    url: fc.tuple(fc.constantFrom('en', 'es', 'fr', '%65n', 'de'), query).map(([lang, q]) => `/${lang}/api/internal/explore/${q}`),
    accept,
    payload: fc.constant(undefined)
  })
  resetCounts()
  await check(t, fc.asyncProperty(explore, holds), runs(6_000))
  for (const status of [200, 400, 404, 406, 414]) t.ok(seenStatuses.has(status), `some request got a ${status}`)
  t.ok(validPages >= 1000, `${validPages} pages checked against the response schema`)
})

t.test('around the 1000-field limit: the limit is exact, and still no 5xx', async t => {
  const limitRequest = fc.record({
    method: fc.constantFrom<Method>('GET', 'HEAD', 'OPTIONS', 'POST'),
    url: fc.tuple(fc.constantFrom('en', 'es', 'xx'), manyFields).map(([lang, q]) => `/${lang}/api/internal/explore/?${q}`),
    accept: fc.constant(undefined),
    payload: fc.constant(undefined)
  })
  const property = fc.asyncProperty(limitRequest, async req => {
    await holds(req)
    const res = await app.inject({ method: req.method, url: req.url })
    const seen = res.raw.req.url ?? req.url
    // The URL limit (8 KiB by default) is checked first; a target past it says nothing about fields.
    if (res.statusCode === 414 && seen.length > 8192) return
    const fields = (seen.slice(seen.indexOf('?') + 1).match(/&/g) ?? []).length + 1
    const refused = res.statusCode === 400 && (req.method === 'HEAD' || JSON.parse(res.body).detail === 'The number of GET/POST parameters exceeded 1000.')
    if (refused !== (fields > MAX_FIELDS)) {
      throw new Error(`${req.method} ${shown(req.url)} (${fields} fields): status ${res.statusCode}, body ${res.body.slice(0, 200)}`)
    }
  })
  await check(t, property, runs(1_000))
})
