// Over real HTTP, an app with the page cache and the fast path on (its answers built by the fast path in front
// of Fastify, kept, then served from the cache) and an app with both off (every answer from the Fastify
// route, built anew) give byte-identical answers to every request: status line, headers in order and case, body. Each generated
// request is sent three times to each app: the first is built, the second built and kept, the third
// served from the cache.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { Agent, request as httpRequest } from 'node:http'
import { isDeepStrictEqual } from 'node:util'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../src/config.js'
import { buildTestApp, makeItem, smallSnapshot, type SnapshotDoc } from './helpers.js'

/** smallSnapshot plus text a renderer could get wrong (non-ASCII, U+2028/U+2029) and a hyphenated language. */
function snapshot (): SnapshotDoc {
  const doc = smallSnapshot()
  doc.languages.en!.push(
    makeItem(26, '2024-01-06', [7, 9], { translated_title: 'Nestlé — Düsseldorf 😀 \u2028 line \u2029 para', translated_abstract: '"quoted" \\ slash </script>' }),
    makeItem(27, '2024-01-06', [8], { translated_title: 'Ünïcödé', display_image: { url: 'https://media.example.org/a.jpg', width: 800, height: 450 } })
  )
  doc.languages['pt-br'] = [makeItem(201, '2024-02-01', [7], { translated_title: 'Ação' })]
  return doc
}

// ---------------------------------------------------------------------------------------------------
// Requests

interface GeneratedRequest {
  method: 'GET' | 'HEAD' | 'OPTIONS' | 'POST'
  target: string
  host: string
  accept: string | undefined
  origin: string | undefined
  forwardedProto: string | undefined
  forwardedHost: string | undefined
  /** Makes an OPTIONS with an Origin a CORS preflight. */
  preflight: boolean
  /**
   * `own`: the ETag of this very request (read first from the app without a cache), as is, weak, or
   * inside a list; `earlier`: an ETag some earlier answer carried; otherwise the header's literal value.
   */
  ifNoneMatch: { kind: 'own', form: 'plain' | 'weak' | 'list' } | { kind: 'earlier', index: number } | { kind: 'literal', value: string } | undefined
}

const opt = <T>(arbitrary: fc.Arbitrary<T>, absentWeight = 3) =>
  fc.oneof({ weight: absentWeight, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary })

const language = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('en', 'en', 'en', 'en', 'es', 'fr', 'pt-br') },
  { weight: 1, arbitrary: fc.constantFrom('de', 'xx', 'zh-hans') },
  { weight: 2, arbitrary: fc.constantFrom('EN', 'e', 'english', 'a'.repeat(101), '%65n', 'en%2Fes', '%zz', 'caf%C3%A9') }
)

const path = fc.oneof(
  { weight: 16, arbitrary: language.map(lang => `/${lang}/api/internal/explore/`) },
  { weight: 2, arbitrary: language.map(lang => `/${lang}/api/internal/explore`) },
  {
    weight: 2,
    arbitrary: fc.tuple(language, fc.constantFrom('explore%2F', 'explore%2f', '%65xplore/', 'explore//', 'explore/%2e'))
      .map(([lang, tail]) => `/${lang}/api/internal/${tail}`)
  },
  { weight: 1, arbitrary: fc.constantFrom('/', '/-/healthz', '/-/readyz', '/en/api/', '/favicon.ico', '/en//api/internal/explore/', '/%zz', '/api/internal/explore/') }
)

const field = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('7', '8', '9', '', '0', '99', '%37', '007').map(v => `companies=${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('abc', '-1', '%207', '%EF%BC%91', '7.0', '+7').map(v => `companies=${v}`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('3', '+5', '%2B5', '%205%20', '%D9%A5', '1_0', 'abc', '0', '-1', '1000', '', '5.0', '2').map(v => `limit=${v}`)
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('1', '2', '+2', '10', '24', '27', '100', '123456789012345678901234567890', '-3', '', 'x', '%D9%A3').map(v => `offset=${v}`)
  },
  { weight: 1, arbitrary: fc.constantFrom('json', 'json', 'api', '', 'JSON', 'js%6Fn').map(v => `format=${v}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('zeta=1', 'a+b=c+d', 'q=%zz', 'caf%C3%A9=%E2%82%AC', 'x=%E2%80%A8', 'y', '=', 'p=%2B%25', 'ç=1', 'z=a%26b%3Dc',
      'companies', 'limit', '%', 'w=%F0%9F%98%80')
  }
)

const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constant('?') },
  { weight: 8, arbitrary: fc.array(field, { minLength: 1, maxLength: 6 }).map(fields => `?${fields.join('&')}`) }
)

const ifNoneMatch: fc.Arbitrary<GeneratedRequest['ifNoneMatch']> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom('plain', 'weak', 'list').map(form => ({ kind: 'own' as const, form: form as 'plain' | 'weak' | 'list' })) },
  { weight: 1, arbitrary: fc.nat().map(index => ({ kind: 'earlier' as const, index })) },
  { weight: 2, arbitrary: fc.constantFrom('*', '"nope"', 'W/"x"', ',,', 'garbage', '').map(value => ({ kind: 'literal' as const, value })) }
)

const method = fc.constantFrom<GeneratedRequest['method']>('GET', 'GET', 'GET', 'GET', 'GET', 'HEAD', 'HEAD', 'OPTIONS', 'POST')
const host = fc.oneof(
  { weight: 8, arbitrary: fc.constant('replica.test') },
  { weight: 3, arbitrary: fc.constantFrom('Replica.TEST:8080', '[::1]:3000', 'www.example.com') },
  { weight: 1, arbitrary: fc.constantFrom('bad_host', 'a b') }
)
const accept = opt(fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('*/*', 'application/json', 'application/json; indent=4', 'application/json; indent=2, text/html', 'text/html;q=0.9, application/json;q=0.1') },
  { weight: 1, arbitrary: fc.constantFrom('text/html', '') }
))
const origin = opt(fc.constantFrom('https://a.example', 'https://b.example', 'null'))
const forwardedProto = opt(fc.constantFrom('https', 'http', 'ftp', 'https, http'))
const forwardedHost = opt(fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('news.example.com', 'a.example.com, b.example.com', 'News.Example.COM:8443') },
  { weight: 1, arbitrary: fc.constant('bad_host') }
))

const generatedRequest: fc.Arbitrary<GeneratedRequest> = fc.record({
  method,
  target: fc.tuple(path, query).map(([p, q]) => p + q),
  host,
  accept,
  origin,
  forwardedProto,
  forwardedHost,
  preflight: fc.boolean(),
  ifNoneMatch
})

/**
 * The same request with one thing changed, sent after it: an answer kept under a key that missed what
 * changed would be served for the variant (two random requests rarely differ in only one thing).
 */
const variation: fc.Arbitrary<Partial<GeneratedRequest> & { query?: string }> = fc.oneof(
  method.map(value => ({ method: value })),
  host.map(value => ({ host: value })),
  accept.map(value => ({ accept: value })),
  origin.map(value => ({ origin: value })),
  forwardedProto.map(value => ({ forwardedProto: value })),
  forwardedHost.map(value => ({ forwardedHost: value })),
  ifNoneMatch.map(value => ({ ifNoneMatch: value })),
  query.map(value => ({ query: value }))
)

/** A request, then variants of it. */
const requestRun = fc.tuple(generatedRequest, fc.array(variation, { maxLength: 3 })).map(([base, variations]) => [
  base,
  ...variations.map(({ query, ...change }) => {
    const mark = base.target.indexOf('?')
    return { ...base, ...change, target: query === undefined ? base.target : (mark < 0 ? base.target : base.target.slice(0, mark)) + query }
  })
])

// ---------------------------------------------------------------------------------------------------
// Answers

/** What a client sees of an answer: status line, every header in order (but those of the connection), body. */
interface Answer {
  status: number
  statusMessage: string
  headers: string[]
  body: Buffer
}

// Headers that describe the moment or the connection, not the answer.
const IGNORED = new Set(['date', 'connection', 'keep-alive'])

interface Client {
  app: FastifyInstance
  agent: Agent
  port: number
}

async function client (t: Test, overrides: Partial<Config>): Promise<Client> {
  const app = await buildTestApp(t, snapshot(), overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  // One connection reused: the server sees requests as a browser or a proxy sends them.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  return { app, agent, port: (app.server.address() as { port: number }).port }
}

function send ({ agent, port }: Client, method: string, target: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: target, headers, agent }, res => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const kept: string[] = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!IGNORED.has((res.rawHeaders[i] as string).toLowerCase())) kept.push(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string)
        }
        resolve({ status: res.statusCode as number, statusMessage: res.statusMessage as string, headers: kept, body: Buffer.concat(chunks) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

function headerOf (answer: Answer, name: string): string | undefined {
  for (let i = 0; i < answer.headers.length; i += 2) {
    if ((answer.headers[i] as string).toLowerCase() === name) return answer.headers[i + 1]
  }
  return undefined
}

const describe = (answer: Answer) =>
  `${answer.status} ${answer.statusMessage} ${JSON.stringify(answer.headers)} ${JSON.stringify(answer.body.toString('latin1').slice(0, 300))}`

/** The request's headers, If-None-Match resolved; `own` reads the request's ETag from the reference app. */
async function headersFor (req: GeneratedRequest, reference: Client, etagsSeen: string[]): Promise<Record<string, string>> {
  const headers: Record<string, string> = { host: req.host }
  if (req.accept !== undefined) headers.accept = req.accept
  if (req.origin !== undefined) headers.origin = req.origin
  if (req.forwardedProto !== undefined) headers['x-forwarded-proto'] = req.forwardedProto
  if (req.forwardedHost !== undefined) headers['x-forwarded-host'] = req.forwardedHost
  if (req.preflight && req.method === 'OPTIONS') headers['access-control-request-method'] = 'GET'
  const inm = req.ifNoneMatch
  if (inm === undefined) return headers
  if (inm.kind === 'literal') {
    headers['if-none-match'] = inm.value
  } else if (inm.kind === 'earlier') {
    headers['if-none-match'] = etagsSeen.length === 0 ? '"none yet"' : etagsSeen[inm.index % etagsSeen.length] as string
  } else {
    const plain = await send(reference, 'GET', req.target, headers)
    const etag = headerOf(plain, 'etag') ?? '"no etag"'
    headers['if-none-match'] = inm.form === 'plain' ? etag : inm.form === 'weak' ? `W/${etag}` : `"other", ${etag}`
  }
  return headers
}

// ---------------------------------------------------------------------------------------------------
// The property

const ATTEMPTS = ['built', 'built and kept', 'cached'] as const

/**
 * `examples`: runs tried before the generated ones, for kinds of answer the generators reach too seldom to
 * count on in every run of the suite (a CORS preflight to a listed origin: ~0.7% of requests, none in about
 * one run of fifty).
 */
async function equivalence (t: Test, overrides: Partial<Config>, numRuns: number, mustSee: number[], examples: GeneratedRequest[][] = []): Promise<void> {
  const cached = await client(t, overrides)
  const uncached = await client(t, { ...overrides, pageCacheMb: 0, fastPath: false })
  t.equal(uncached.app.fastPath, null, 'the reference answers from the Fastify route only')
  let fastAnswers = 0
  cached.app.fastPath?.onAnswer(() => { fastAnswers++ })
  const etagsSeen: string[] = []
  const statuses = new Map<number, number>()
  let pages = 0
  let requests = 0
  let compared = 0

  /** Sends the request three times to each app; throws unless all six answers are the same. */
  async function sameEverywhere (req: GeneratedRequest): Promise<void> {
    requests++
    const headers = await headersFor(req, uncached, etagsSeen)
    const label = `${req.method} ${req.target} ${JSON.stringify(headers)}`
    const reference = await send(uncached, req.method, req.target, headers)
    for (const [app, name] of [[cached, 'fast path and cache'], [uncached, 'route, no cache']] as const) {
      for (const attempt of ATTEMPTS) {
        // The reference is the first answer of the app without a cache; it is not sent again.
        const answer = app === uncached && attempt === 'built' ? reference : await send(app, req.method, req.target, headers)
        compared++
        if (!isDeepStrictEqual(answer, reference)) {
          throw new Error(`${label}\n  ${name}, ${attempt}: ${describe(answer)}\n  expected (route, no cache, first): ${describe(reference)}`)
        }
      }
    }
    statuses.set(reference.status, (statuses.get(reference.status) ?? 0) + 1)
    const etag = headerOf(reference, 'etag')
    if (etag !== undefined && !etagsSeen.includes(etag)) etagsSeen.push(etag)
    if (reference.status === 200 && req.method === 'GET' && /^\/[a-z-]+\/api\/internal\/explore\/(\?|$)/.test(req.target)) {
      const body = JSON.parse(reference.body.toString('utf8')) as { results: unknown[] }
      if (body.results.length > 0) pages++
    }
  }

  const property = fc.asyncProperty(requestRun, async run => {
    for (const req of run) await sameEverywhere(req)
  })
  const details = await fc.check(property, { numRuns, examples: examples.map(run => [run]) })
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    t.fail(`${error}\n${fc.defaultReportMessage(details) ?? ''}`)
    return
  }
  t.pass(`${details.numRuns} runs, ${requests} generated requests, ${compared} answers identical to the route's`)
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
  // So that the property cannot hold vacuously: the generators still reach every kind of answer.
  for (const status of mustSee) t.ok((statuses.get(status) ?? 0) > 0, `some requests were answered ${status}`)
  t.ok(pages >= numRuns / 25, `${pages} non-empty pages compared`)
  t.ok(fastAnswers >= pages, `${fastAnswers} answers from the fast path, compared with the route's`)
}

/** The third GET of a page (from the cache) is the first one's bytes, and a page of the snapshot. */
async function thirdGetIsTheFirst (t: Test, overrides: Partial<Config>): Promise<void> {
  const app = await client(t, overrides)
  const target = '/en/api/internal/explore/?companies=9&limit=2&offset=1&zeta=%C3%A9'
  const headers = { host: 'replica.test', origin: 'https://a.example', 'x-forwarded-proto': 'https' }
  const answers: Answer[] = []
  for (let i = 0; i < 3; i++) answers.push(await send(app, 'GET', target, headers))
  const [first, , third] = answers as [Answer, Answer, Answer]
  t.equal(first.status, 200)
  t.ok(third.body.equals(first.body), 'the third answer has the first one\'s bytes')
  t.same(third.headers, first.headers, 'and its headers')
  const page = JSON.parse(third.body.toString('utf8')) as { count: number, results: Array<{ pk: number }>, next: string }
  t.equal(page.count, 6, 'company 9: pks 5, 10, 15, 20, 25, 26')
  t.same(page.results.map(item => item.pk), [25, 20])
  const scheme = overrides.trustProxy === true ? 'https' : 'http'
  t.equal(page.next, `${scheme}://replica.test/en/api/internal/explore/?companies=9&limit=2&offset=3&zeta=%C3%A9`)
}

t.test('default configuration: the cache and the fast path answer exactly as the route', async t => {
  await thirdGetIsTheFirst(t, {})
  await equivalence(t, {}, 250, [200, 301, 304, 400, 404, 405, 406])
})

t.test('CORS limited to a listed origin, proxies trusted, Cache-Control: the same', async t => {
  const overrides: Partial<Config> = { corsOrigin: ['https://a.example'], trustProxy: true, cacheMaxAge: 60 }
  await thirdGetIsTheFirst(t, overrides)
  const preflight: GeneratedRequest = {
    method: 'OPTIONS',
    target: '/en/api/internal/explore/?companies=9',
    host: 'replica.test',
    accept: undefined,
    origin: 'https://a.example',
    forwardedProto: undefined,
    forwardedHost: undefined,
    preflight: true,
    ifNoneMatch: undefined
  }
  await equivalence(t, overrides, 250, [200, 204, 301, 304, 400, 404, 405, 406], [[preflight]])
})

t.test('CORS off, proxies trusted, allowed hosts, Cache-Control and a small page limit: the same', async t => {
  // Unlike CORS limited to listed origins, CORS off lets the fast path build pages with these headers.
  const overrides: Partial<Config> = { corsOrigin: false, trustProxy: true, allowedHosts: ['replica.test', '.example.com'], cacheMaxAge: 0, maxLimit: 4 }
  await equivalence(t, overrides, 150, [200, 301, 304, 400, 404, 405, 406])
})
