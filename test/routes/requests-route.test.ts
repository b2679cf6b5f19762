// GET /-/requests' filters, DELETE /-/requests between tests (the journal and the trouble started over), the HAR
// 1.2 of /-/requests.har checked against the format's own rules, where the journal answers and when it is off.
import t from 'tap'
import { Type, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import type { Journal } from '../../src/schemas/request-journal.js'
import { buildTestApp, EXPLORE, smallSnapshot } from '../helpers.js'

async function serving (t: Parameters<typeof buildTestApp>[0], overrides: Partial<Config> = {}): Promise<{ app: FastifyInstance, origin: string }> {
  const app = await buildTestApp(t, smallSnapshot(), overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return { app, origin: `http://127.0.0.1:${port}` }
}

async function get (url: string, init: RequestInit = {}): Promise<{ status: number, body: string, headers: Headers }> {
  const response = await fetch(url, init)
  return { status: response.status, body: await response.text(), headers: response.headers }
}

async function requests (origin: string, filters = ''): Promise<Journal['requests']> {
  const answer = await get(`${origin}/-/requests${filters}`)
  if (answer.status !== 200) throw new Error(`${answer.status} ${answer.body}`)
  return (JSON.parse(answer.body) as Journal).requests
}

t.test('filters: path, method, status or its class, query fields, since, limit; each bad one a 400 saying why', async t => {
  const { origin } = await serving(t, { chaos: true })
  await get(`${origin}${EXPLORE}?companies=3&limit=2`)
  await get(`${origin}${EXPLORE}?companies=3&companies=7`)
  // An instant after the journal's own stamp of the requests so far (whole milliseconds), and its clock past it after.
  const middle = new Date(Date.parse((await requests(origin, '?limit=1'))[0]?.at ?? '') + 1).toISOString()
  await new Promise(resolve => setTimeout(resolve, 5))
  await get(`${origin}${EXPLORE}?companies=7&__status=503`)
  await get(`${origin}/es/api/internal/explore/?limit=1`, { method: 'HEAD' })
  await get(`${origin}/nowhere`)
  const urls = async (filters: string): Promise<string[]> => (await requests(origin, filters)).map(entry => `${entry.method} ${entry.url} ${entry.status}`)
  t.same(await urls(`?path=${EXPLORE}`), [
    `GET ${EXPLORE}?companies=7&__status=503 503`, `GET ${EXPLORE}?companies=3&companies=7 200`, `GET ${EXPLORE}?companies=3&limit=2 200`
  ], 'path: exactly, the query aside')
  t.same(await urls('?method=head'), ['HEAD /es/api/internal/explore/?limit=1 200'], 'method, any case')
  t.same(await urls('?status=5xx'), [`GET ${EXPLORE}?companies=7&__status=503 503`], 'a class')
  t.same(await urls('?status=404'), ['GET /nowhere 404'], 'a status')
  t.same(await urls('?query=companies%3D7'), [`GET ${EXPLORE}?companies=7&__status=503 503`, `GET ${EXPLORE}?companies=3&companies=7 200`], 'a field with a value, among its values')
  t.same(await urls('?query=companies%3D3&query=limit'), [`GET ${EXPLORE}?companies=3&limit=2 200`], 'every field given, one only named')
  t.same(await urls(`?since=${encodeURIComponent(middle)}&status=2xx`), ['HEAD /es/api/internal/explore/?limit=1 200'], 'since an instant')
  t.same(await urls('?limit=2'), ['GET /nowhere 404', 'HEAD /es/api/internal/explore/?limit=1 200'], 'the newest, at most limit')
  t.same(await urls('?status=none'), [], 'none: requests that got no answer')
  for (const [filters, detail] of <Array<[string, string]>>[
    ['?stauts=503', 'Unknown filter "stauts": the filters are path, method, status, query, since, limit.'],
    ['?status=50', 'status="50": give a status (503), a class (5xx) or none.'],
    ['?since=yesterday', 'since="yesterday": give an instant in ISO-8601 (2026-11-30T10:00:00Z).'],
    ['?limit=0', 'limit="0": give a whole number above 0.']
  ]) {
    const answer = await get(`${origin}/-/requests${filters}`)
    t.same([answer.status, JSON.parse(answer.body)], [400, { detail }], filters)
    t.equal((await get(`${origin}/-/requests.har${filters}`)).status, 400, `${filters}, the HAR too`)
  }
})

t.test('DELETE /-/requests forgets every request and starts the trouble over: a run after it draws as the first did', async t => {
  for (const chaosReplay of ['request', 'order'] as const) {
    const { origin } = await serving(t, { failRate: 0.5, chaosSeed: 7, chaosReplay })
    const run = async (): Promise<number[]> => {
      const statuses: number[] = []
      for (let i = 0; i < 12; i++) statuses.push((await get(`${origin}${EXPLORE}?limit=1&offset=${i % 3}`)).status)
      return statuses
    }
    const first = await run()
    t.same(new Set(first), new Set([200, 503]), `${chaosReplay}: pages and failures`)
    t.not((await run()).join(), first.join(), `${chaosReplay}: going on, other draws`)
    const reset = await get(`${origin}/-/requests`, { method: 'DELETE' })
    t.equal(reset.status, 200)
    t.match(JSON.parse(reset.body), { journal: { kept: 0, bytes: 0, dropped: 0, threads: 1, trouble: { seed: 7, replay: chaosReplay } } })
    t.same(await requests(origin), [], 'nothing kept')
    t.same(await run(), first, `${chaosReplay}: after DELETE, the first run's trouble again`)
    t.same((await requests(origin)).map(entry => entry.trouble?.draw).reverse(),
      chaosReplay === 'request' ? [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3] : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      `${chaosReplay}: each request's draw, as the journal says it`)
  }
})

// HAR 1.2 as its specification writes it (http://www.softwareishard.com/blog/har-12-spec/), written here apart from
// src/schemas: every object the format requires, with its required fields and their types.
const NameValue = Type.Object({ name: Type.String(), value: Type.String(), comment: Type.Optional(Type.String()) })
const Har12 = Type.Object({
  log: Type.Object({
    version: Type.Literal('1.2'),
    creator: Type.Object({ name: Type.String(), version: Type.String() }),
    browser: Type.Optional(Type.Object({ name: Type.String(), version: Type.String() })),
    pages: Type.Optional(Type.Array(Type.Object({}))),
    entries: Type.Array(Type.Object({
      pageref: Type.Optional(Type.String()),
      startedDateTime: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$' }),
      time: Type.Number({ minimum: 0 }),
      request: Type.Object({
        method: Type.String(),
        url: Type.String(),
        httpVersion: Type.String(),
        cookies: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
        headers: Type.Array(NameValue),
        queryString: Type.Array(NameValue),
        headersSize: Type.Integer(),
        bodySize: Type.Integer()
      }),
      response: Type.Object({
        status: Type.Integer(),
        statusText: Type.String(),
        httpVersion: Type.String(),
        cookies: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
        headers: Type.Array(NameValue),
        content: Type.Object({ size: Type.Integer(), compression: Type.Optional(Type.Integer()), mimeType: Type.String(), text: Type.Optional(Type.String()) }),
        redirectURL: Type.String(),
        headersSize: Type.Integer(),
        bodySize: Type.Integer()
      }),
      cache: Type.Object({}),
      timings: Type.Object({
        blocked: Type.Optional(Type.Number({ minimum: -1 })),
        dns: Type.Optional(Type.Number({ minimum: -1 })),
        connect: Type.Optional(Type.Number({ minimum: -1 })),
        send: Type.Number({ minimum: 0 }),
        wait: Type.Number({ minimum: 0 }),
        receive: Type.Number({ minimum: 0 }),
        ssl: Type.Optional(Type.Number({ minimum: -1 }))
      })
    }))
  })
})

/** Fields the format does not name start with `_` (its rule for custom fields). */
function customFieldsUnderscored (value: unknown, schema: TSchema, path: string, found: string[]): void {
  if (typeof value !== 'object' || value === null || (schema.type !== 'object' && schema.type !== 'array')) return
  if (Array.isArray(value)) {
    value.forEach((item, i) => customFieldsUnderscored(item, schema.items as TSchema, `${path}[${i}]`, found))
    return
  }
  const known = (schema.properties ?? {}) as Record<string, TSchema>
  for (const [name, member] of Object.entries(value)) {
    if (known[name] !== undefined) customFieldsUnderscored(member, known[name], `${path}.${name}`, found)
    else if (!name.startsWith('_')) found.push(`${path}.${name}`)
  }
}

t.test('/-/requests.har is HAR 1.2: every field the format requires, the journal\'s own as _ fields, oldest first', async t => {
  const { origin } = await serving(t, { fault: 'reset', faultRate: 1, chaosSeed: 1 })
  await get(`${origin}/en/api/internal/explore?companies=3`, { redirect: 'manual' })
  await get(`${origin}${EXPLORE}?companies=3&limit=2`, { headers: { authorization: 'Bearer xyz', prefer: 'return=minimal' } }).catch(() => null)
  const answer = await get(`${origin}/-/requests.har?limit=5`)
  t.equal(answer.status, 200)
  t.equal(answer.headers.get('content-disposition'), 'attachment; filename="explore-requests.har"', 'saved as a file')
  const har = JSON.parse(answer.body)
  t.ok(Value.Check(Har12, har), [...Value.Errors(Har12, har)].map(error => `${error.path}: ${error.message}`).join('; ') || 'valid HAR 1.2')
  const stray: string[] = []
  customFieldsUnderscored(har, Har12, '', stray)
  t.same(stray, [], 'no field the format does not name, but _ ones')
  const [redirect, reset] = har.log.entries
  t.match(redirect, {
    request: { method: 'GET', url: /^http:\/\/127\.0\.0\.1:\d+\/en\/api\/internal\/explore\?companies=3$/, queryString: [{ name: 'companies', value: '3' }] },
    response: { status: 301, statusText: 'Moved Permanently', content: { size: 0, mimeType: 'text/html; charset=utf-8' } },
    _trouble: null
  })
  t.match(reset, {
    request: { headers: [{ name: 'Host' }, { name: 'Accept' }, { name: 'Prefer', value: 'return=minimal' }, { name: 'Authorization', value: '[redacted]' }] },
    response: { status: 0, _error: 'net::ERR_CONNECTION_RESET' },
    _trouble: { draw: 0, fault: 'reset' }
  }, 'a reset: no answer, as a browser records one')
  t.notOk(answer.body.includes('xyz'), 'no Authorization value')
})

t.test('where the journal answers: with the other /-/ pages; off, a 404 that says how to turn it on', async t => {
  const off = await serving(t, { requestJournal: false })
  for (const [method, path] of [['GET', '/-/requests'], ['GET', '/-/requests.har'], ['DELETE', '/-/requests']]) {
    const answer = await get(`${off.origin}${path}`, { method })
    t.same([answer.status, JSON.parse(answer.body)], [404, { detail: 'The request journal is off: start the service with REQUEST_JOURNAL=true (auto: on when HOST is a loopback address).' }], `${method} ${path}`)
  }
  t.equal(off.app.requestJournal, null, 'no journal kept')

  // OPS_PORT: on the operator's port only; the public port's 404 for it, and the operator's own traffic not journaled.
  const { app, origin } = await serving(t, { opsPort: 0 })
  await app.ops?.listen()
  const ops = `http://127.0.0.1:${(app.ops?.server.address() as { port: number }).port}`
  t.equal((await get(`${origin}/-/requests`)).status, 404, 'not on the public port')
  await get(`${origin}${EXPLORE}?limit=1`)
  await get(`${ops}${EXPLORE}?limit=2`)
  await get(`${ops}/-/`)
  t.same((await requests(ops)).map(entry => entry.url), [`${EXPLORE}?limit=1`], 'the app\'s requests on the public port alone')
  const docs = JSON.parse((await get(`${ops}/-/openapi.json`)).body)
  t.ok(docs.paths['/-/requests'].get && docs.paths['/-/requests'].delete && docs.paths['/-/requests.har'].get, 'in the OpenAPI document')
})
