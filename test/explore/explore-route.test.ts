import t from 'tap'
import fc from 'fast-check'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ExplorePageSchema } from '../../src/schemas/explore-response.js'
import '../../src/schemas/formats.js'
import { buildTestApp, EXPLORE, makeItem, rawRequest, smallSnapshot } from '../helpers.js'
import { runs } from '../property-runs.js'

const pageCheck = TypeCompiler.Compile(ExplorePageSchema)
const HOST = 'http://localhost:80'
const pksOf = (body: string): number[] => (JSON.parse(body).results as Array<{ pk: number }>).map(r => r.pk)

t.test('GET: the envelope, first page, default limit 10', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject(`${EXPLORE}?companies=8`)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json')
  t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  t.equal(res.headers.vary, 'Accept')
  const body = JSON.parse(res.body)
  t.ok(pageCheck.Check(body), 'valid against the response schema')
  t.same(Object.keys(body), ['count', 'next', 'previous', 'results'])
  t.equal(body.count, 17)
  t.equal(body.next, `${HOST}${EXPLORE}?companies=8&limit=10&offset=10`)
  t.equal(body.previous, null)
  t.same(pksOf(res.body), [25, 20, 10, 5, 19, 14, 4, 23, 13, 8])
})

t.test('limit, offset and the links of a middle and a last page', async t => {
  const app = await buildTestApp(t)
  const middle = JSON.parse((await app.inject(`${EXPLORE}?companies=8&limit=5&offset=5`)).body)
  t.same([middle.count, middle.next, middle.previous], [17, `${HOST}${EXPLORE}?companies=8&limit=5&offset=10`, `${HOST}${EXPLORE}?companies=8&limit=5`])
  const last = JSON.parse((await app.inject(`${EXPLORE}?companies=8&limit=5&offset=15`)).body)
  t.same([last.results.length, last.next, last.previous], [2, null, `${HOST}${EXPLORE}?companies=8&limit=5&offset=10`])
})

t.test('no companies parameter, or only blank ones: every item of the language', async t => {
  const app = await buildTestApp(t)
  for (const query of ['', '?companies=', '?companies=&companies=']) {
    const body = JSON.parse((await app.inject(`${EXPLORE}${query}`)).body)
    t.equal(body.count, 25, query)
  }
  t.equal(JSON.parse((await app.inject(`${EXPLORE}?companies=&companies=7`)).body).count, 8, 'blank values are ignored')
})

t.test('repeated companies: the union, each item once', async t => {
  const app = await buildTestApp(t)
  const body = JSON.parse((await app.inject(`${EXPLORE}?companies=7&companies=9&limit=100`)).body)
  t.equal(body.count, 12)
  t.same(pksOf(JSON.stringify(body)), [25, 20, 15, 10, 5, 24, 9, 18, 3, 12, 21, 6])
})

t.test('a company no item links to: an empty page', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject(`${EXPLORE}?companies=424242`)
  t.equal(res.statusCode, 200)
  t.same(JSON.parse(res.body), { count: 0, next: null, previous: null, results: [] })
})

t.test('companies that are not whole numbers: DRF\'s 400', async t => {
  const app = await buildTestApp(t)
  for (const value of ['abc', '%2B7', '-1', '7.0', '%EF%BC%91', '7,8']) {
    const res = await app.inject(`${EXPLORE}?companies=${value}`)
    t.equal(res.statusCode, 400, value)
    t.equal(res.body, '{"companies":["Enter a whole number."]}')
    t.equal(res.headers['content-type'], 'application/json')
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  }
})

t.test('bad limit and offset values fall back to the defaults; the maximum clamps', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { maxLimit: 4 })
  const body = (query: string) => app.inject(`${EXPLORE}?${query}`).then(r => JSON.parse(r.body))
  t.equal((await body('limit=abc')).results.length, 10, 'the default is not clamped (DRF returns default_limit as is)')
  t.equal((await body('limit=2')).results.length, 2)
  t.equal((await body('limit=99')).next, `${HOST}${EXPLORE}?limit=4&offset=4`)
  t.equal((await body('offset=-3')).previous, null)
  t.equal((await body('offset=x&limit=2&limit=3')).results.length, 3, 'the last value wins')
})

t.test('an offset past the count: no results, a link back', async t => {
  const app = await buildTestApp(t)
  const body = JSON.parse((await app.inject(`${EXPLORE}?offset=100`)).body)
  t.same(body, { count: 25, next: null, previous: `${HOST}${EXPLORE}?limit=10&offset=90`, results: [] })
})

t.test('links keep every other parameter, re-encoded and sorted by key', async t => {
  const app = await buildTestApp(t)
  const body = JSON.parse((await app.inject(`${EXPLORE}?zeta=1&companies=8&offset=10&limit=3&empty=&q=caf%C3%A9+au+lait&a=%2B`)).body)
  t.equal(body.next, `${HOST}${EXPLORE}?a=%2B&companies=8&empty=&limit=3&offset=13&q=caf%C3%A9+au+lait&zeta=1`)
  t.equal(body.previous, `${HOST}${EXPLORE}?a=%2B&companies=8&empty=&limit=3&offset=7&q=caf%C3%A9+au+lait&zeta=1`)
})

t.test('links use the Host header, the public base URL, or forwarded headers when trusted', async t => {
  const direct = await buildTestApp(t)
  const next = (app: typeof direct, headers: Record<string, string>) =>
    app.inject({ url: EXPLORE, headers }).then(r => JSON.parse(r.body).next as string)
  t.equal(await next(direct, { host: 'news.test:8000' }), `http://news.test:8000${EXPLORE}?limit=10&offset=10`)
  t.equal(await next(direct, { host: 'news.test', 'x-forwarded-host': 'evil.test', 'x-forwarded-proto': 'https' }), `http://news.test${EXPLORE}?limit=10&offset=10`)
  const proxied = await buildTestApp(t, smallSnapshot(), { trustProxy: true })
  t.equal(await next(proxied, { host: 'internal', 'x-forwarded-host': 'news.example.com', 'x-forwarded-proto': 'https' }), `https://news.example.com${EXPLORE}?limit=10&offset=10`)
  const pinned = await buildTestApp(t, smallSnapshot(), { publicBaseUrl: 'https://news.example.com' })
  t.equal(await next(pinned, { host: 'anything.test' }), `https://news.example.com${EXPLORE}?limit=10&offset=10`)
})

t.test('a Host header Django would refuse: 400, before anything else', async t => {
  const app = await buildTestApp(t)
  for (const url of [EXPLORE, '/nowhere', '/en/api/internal/explore']) {
    const res = await app.inject({ url, headers: { host: 'bad_host' } })
    t.equal(res.statusCode, 400, url)
    t.same(JSON.parse(res.body), { detail: 'Invalid Host header.' })
  }
})

t.test('two Host headers: 400, as Django sees them joined into one invalid host', async t => {
  const app = await buildTestApp(t)
  const raw = await rawRequest(app, `GET ${EXPLORE} HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n`)
  t.match(raw, /^HTTP\/1\.1 400 /)
  t.match(raw, /\{"detail":"Invalid Host header\."\}$/)
})

t.test('what Node\'s HTTP parser refuses is answered in JSON too', async t => {
  const app = await buildTestApp(t)
  const target = Buffer.concat([Buffer.from(`${EXPLORE}?q=`), Buffer.from([0xc3, 0xa9])])
  const raw = await rawRequest(app, Buffer.concat([Buffer.from('GET '), target, Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]))
  t.match(raw, /^HTTP\/1\.1 400 Bad Request\r\nContent-Type: application\/json\r\n/)
  t.match(raw, /\r\n\r\n\{"detail":"Bad Request\."\}$/)
  const head = await rawRequest(app, Buffer.concat([Buffer.from('HEAD '), target, Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]))
  t.match(head, /^HTTP\/1\.1 400 Bad Request\r\n.*\r\n\r\n$/s, 'no body after a HEAD')
  const huge = await rawRequest(app, `GET ${EXPLORE} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1\.1 431 /)
})

t.test('HEAD: GET\'s status and headers, no body', async t => {
  const app = await buildTestApp(t)
  const get = await app.inject(`${EXPLORE}?companies=7`)
  const head = await app.inject({ method: 'HEAD', url: `${EXPLORE}?companies=7` })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  for (const name of ['content-type', 'content-length', 'allow', 'vary']) t.equal(head.headers[name], get.headers[name], name)
  t.equal(Number(head.headers['content-length']), Buffer.byteLength(get.body))
  t.equal((await app.inject({ method: 'HEAD', url: '/xx/api/internal/explore/' })).statusCode, 404)
})

t.test('OPTIONS: DRF\'s metadata', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'OPTIONS', url: EXPLORE })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  t.equal(res.headers['content-type'], 'application/json')
  const body = JSON.parse(res.body)
  t.same(Object.keys(body), ['name', 'description', 'renders', 'parses'])
  t.same([body.name, body.renders, body.parses], ['Explore', ['application/json'], ['application/json']])
  t.equal((await app.inject({ method: 'OPTIONS', url: '/xx/api/internal/explore/' })).statusCode, 200, 'metadata does not look at the language')
})

t.test('a CORS preflight is answered by @fastify/cors; simple requests get the origin header', async t => {
  const app = await buildTestApp(t)
  const preflight = await app.inject({ method: 'OPTIONS', url: EXPLORE, headers: { origin: 'https://app.test', 'access-control-request-method': 'GET' } })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], '*')
  t.equal(preflight.body, '')
  const get = await app.inject({ url: EXPLORE, headers: { origin: 'https://app.test' } })
  t.equal(get.headers['access-control-allow-origin'], '*')
  t.equal(get.headers.vary, 'Accept', 'any origin: nothing varies by Origin')
})

t.test('CORS restricted to listed origins, or off', async t => {
  const listed = await buildTestApp(t, smallSnapshot(), { corsOrigin: ['https://app.test'] })
  const allowed = await listed.inject({ url: EXPLORE, headers: { origin: 'https://app.test' } })
  t.equal(allowed.headers['access-control-allow-origin'], 'https://app.test')
  t.equal(allowed.headers.vary, 'Accept, Origin')
  const other = await listed.inject({ url: EXPLORE, headers: { origin: 'https://evil.test' } })
  t.equal(other.headers['access-control-allow-origin'], undefined)
  const off = await buildTestApp(t, smallSnapshot(), { corsOrigin: false })
  const res = await off.inject({ url: EXPLORE, headers: { origin: 'https://app.test' } })
  t.equal(res.headers['access-control-allow-origin'], undefined)
  t.equal((await off.inject({ method: 'OPTIONS', url: EXPLORE, headers: { origin: 'https://app.test', 'access-control-request-method': 'GET' } })).statusCode, 200, 'no CORS: OPTIONS is plain metadata')
})

t.test('other methods: 405 with Allow, bodies never read', async t => {
  const app = await buildTestApp(t)
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'PURGE', 'LINK'] as const) {
    const res = await app.inject({ method, url: `${EXPLORE}?companies=7`, headers: { 'content-type': 'application/json' }, payload: '{broken' })
    t.equal(res.statusCode, 405, method)
    t.equal(res.body, JSON.stringify({ detail: `Method "${method}" not allowed.` }))
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
    t.equal(res.headers['content-type'], 'application/json')
  }
  t.equal((await app.inject({ method: 'POST', url: '/xx/api/internal/explore/' })).statusCode, 405, 'the method is checked before the language')
  // Fastify answered these before any route: a QUERY without Content-Type 400, a malformed one 415.
  for (const [method, headers] of [['QUERY', {}], ['PUT', { 'content-type': ';;;' }], ['OPTIONS', { 'content-type': ';;;' }]] as const) {
    const res = await app.inject({ method, url: EXPLORE, headers, payload: 'x' })
    t.equal(res.statusCode, method === 'OPTIONS' ? 200 : 405, `${method} ${JSON.stringify(headers)}`)
  }
  t.equal((await app.inject({ method: 'QUERY', url: '/xx' })).statusCode, 404, 'and elsewhere the path\'s answer')
})

t.test('the path without its trailing slash: 301, query kept', async t => {
  const app = await buildTestApp(t)
  for (const [url, location] of [
    ['/en/api/internal/explore?companies=7&limit=5', '/en/api/internal/explore/?companies=7&limit=5'],
    ['/en/api/internal/explore', '/en/api/internal/explore/'],
    ['/en/api/internal/explore?', '/en/api/internal/explore/'],
    ['/xx/api/internal/explore', '/xx/api/internal/explore/'],
    ['/%65n/api/internal/explore', '/en/api/internal/explore/']
  ]) {
    const res = await app.inject(url as string)
    t.equal(res.statusCode, 301, url as string)
    t.equal(res.headers.location, location)
    t.equal(res.body, '')
  }
  t.equal((await app.inject({ method: 'POST', url: '/en/api/internal/explore' })).statusCode, 301, 'any method')
  t.equal((await app.inject('/EN/api/internal/explore')).statusCode, 404, 'only a path that exists with the slash')
})

t.test('a language the snapshot lacks, and any other path: 404 JSON', async t => {
  const app = await buildTestApp(t)
  for (const url of ['/de/api/internal/explore/', '/pt-br/api/internal/explore/']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.equal(res.body, '{"detail":"Not found."}')
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS', 'the view answered')
  }
  for (const url of ['/', '/EN/api/internal/explore/', '/english/api/internal/explore/', '/en/api/internal/explore//',
    '/en/api/internal/explore/extra/', '/en/api/', '/%zz', '/en/api/internal/explore/%zz']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.equal(res.body, '{"detail":"Not found."}')
    t.equal(res.headers['content-type'], 'application/json')
  }
})

t.test('Django matches decoded paths: an encoded slash or letter still reaches the view', async t => {
  const app = await buildTestApp(t)
  for (const url of ['/en/api/internal/explore%2F?limit=1', '/%65n/api/internal/explore/?limit=1', '/en/api/internal/explore%2f?limit=1']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.equal(JSON.parse(res.body).next, `${HOST}${EXPLORE}?limit=1&offset=1`, 'links name the decoded path')
  }
  // Read as Django's QueryDict there too: lists of values, the last one winning, blank fields kept.
  const res = await app.inject('/en/api/internal/explore%2F?format=json&limit=25&limit=2&companies=7&companies=9&zeta')
  t.equal(res.statusCode, 200)
  t.equal(JSON.parse(res.body).next, `${HOST}${EXPLORE}?companies=7&companies=9&format=json&limit=2&offset=2&zeta=`)
  t.same(res.body, (await app.inject('/en/api/internal/explore/?format=json&limit=25&limit=2&companies=7&companies=9&zeta')).body, 'the same page as the path itself')
})

t.test('a path segment too long to be a parameter is an unknown path', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject(`/${'a'.repeat(3000)}/api/internal/explore/`)
  t.equal(res.statusCode, 404)
  t.equal(res.body, '{"detail":"Not found."}')
})

t.test('an empty language answers with count 0', async t => {
  const app = await buildTestApp(t)
  t.same(JSON.parse((await app.inject('/fr/api/internal/explore/')).body), { count: 0, next: null, previous: null, results: [] })
})

t.test('content negotiation: Accept and ?format as DRF with one JSON renderer', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ url: EXPLORE, headers: { accept: 'text/html' } })
  t.equal(res.statusCode, 406)
  t.equal(res.body, '{"detail":"Could not satisfy the request Accept header."}')
  t.equal((await app.inject({ url: EXPLORE, headers: { accept: 'text/html,*/*;q=0.8' } })).statusCode, 200)
  t.equal((await app.inject(`${EXPLORE}?format=api`)).statusCode, 404)
  const json = await app.inject(`${EXPLORE}?format=json&limit=1`)
  t.equal(JSON.parse(json.body).next, `${HOST}${EXPLORE}?format=json&limit=1&offset=1`)
  t.equal((await app.inject({ method: 'POST', url: EXPLORE, headers: { accept: 'text/html' } })).statusCode, 406, 'negotiation comes before the method check')
})

t.test('Accept: application/json; indent=N gives indented JSON', async t => {
  const app = await buildTestApp(t)
  const compact = await app.inject(`${EXPLORE}?limit=2`)
  const indented = await app.inject({ url: `${EXPLORE}?limit=2`, headers: { accept: 'application/json; indent=4' } })
  t.equal(indented.body, JSON.stringify(JSON.parse(compact.body), null, 4))
  t.match(indented.body, /^\{\n {4}"count": 25,\n/)
})

t.test('more than 1000 query fields: 400', async t => {
  const app = await buildTestApp(t)
  t.equal((await app.inject(`${EXPLORE}?${'a=1&'.repeat(999)}a=1`)).statusCode, 200)
  const res = await app.inject(`${EXPLORE}?${'a=1&'.repeat(1000)}a=1`)
  t.equal(res.statusCode, 400)
  t.equal(JSON.parse(res.body).detail, 'The number of GET/POST parameters exceeded 1000.')
  t.equal(res.headers.allow, undefined, 'Django refuses it before the view: no view headers')
  t.equal((await app.inject(`${EXPLORE}?${'&'.repeat(1000)}`)).statusCode, 400, 'empty fields count too')
})

t.test('non-ASCII text is written as is, never \\u-escaped', async t => {
  const app = await buildTestApp(t, { languages: { en: [makeItem(1, '2024-01-01', [1], { translated_title: 'Nestlé répond à “Le Monde”', translated_url: '/en/latest-news/nestlé-répond/' })] } })
  const res = await app.inject(EXPLORE)
  t.ok(res.rawPayload.includes(Buffer.from('"translated_title":"Nestlé répond à “Le Monde”"')))
  t.ok(res.rawPayload.includes(Buffer.from('"/en/latest-news/nestlé-répond/"')))
})

t.test('fields the original does not serve never reach a client', async t => {
  const item = makeItem(1, '2024-01-01', [31337], {
    internal_note: 'SECRET-NOTE',
    display_image: { url: 'https://img/1.jpg', width: 1, height: 1, storage_path: 'SECRET-PATH' } as never
  })
  const app = await buildTestApp(t, { languages: { en: [item] } })
  const res = await app.inject(`${EXPLORE}?companies=31337`)
  t.equal(JSON.parse(res.body).count, 1)
  for (const secret of ['companies', '31337', 'SECRET-NOTE', 'internal_note', 'SECRET-PATH']) {
    t.notOk(res.body.includes(secret), `${secret} is not served`)
  }
})

t.test('walking next links sees every item exactly once, in order', async t => {
  const items = Array.from({ length: 137 }, (_, i) => makeItem(1000 - i * 7, `2023-0${1 + (i % 9)}-1${i % 10}`, [i % 4, (i * 3) % 5]))
  const app = await buildTestApp(t, { languages: { en: items } }, { maxLimit: 50 })
  const all = pksOf((await app.inject(`${EXPLORE}?limit=50&offset=0`)).body)
    .concat(pksOf((await app.inject(`${EXPLORE}?limit=50&offset=50`)).body), pksOf((await app.inject(`${EXPLORE}?limit=50&offset=100`)).body))
  await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 60 }), fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }), async (limit, company) => {
    const filter = company === undefined ? '' : `companies=${company}&`
    const expected = company === undefined ? all : all.filter(pk => { const i = (1000 - pk) / 7; return i % 4 === company || (i * 3) % 5 === company })
    const seen: number[] = []
    let url: string | null = `${EXPLORE}?${filter}limit=${limit}`
    let pages = 0
    while (url !== null) {
      const body: { count: number, next: string | null, results: Array<{ pk: number }> } = JSON.parse((await app.inject(url)).body)
      if (body.count !== expected.length) return false
      seen.push(...body.results.map(r => r.pk))
      url = body.next === null ? null : body.next.slice(HOST.length)
      if (++pages > 200) return false
    }
    return JSON.stringify(seen) === JSON.stringify(expected)
  }), { numRuns: runs(60) })
})
