// The fast path over real HTTP: what it answers, built or cached, errors included, is byte for byte what
// the Fastify route answers (an app with FAST_PATH off), and whatever is not a page request reaches Fastify.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { writeFile } from 'node:fs/promises'
import type { RequestLine } from '../../src/http/request-log.js'
import { buildTestApp, EXPLORE, rawRequest, smallSnapshot, reloadFile } from '../helpers.js'

/** A whole HTTP/1.1 exchange on its own connection; the answer without its Date header. */
async function exchange (app: FastifyInstance, method: string, url: string, headers: Record<string, string> = {}): Promise<string> {
  const lines = [`${method} ${url} HTTP/1.1`, 'Host: localhost', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  const answer = await rawRequest(app, `${lines.join('\r\n')}\r\n\r\n`)
  return answer.replace(/\r\nDate: [^\r]*/i, '')
}

/** The app listening, and the answers its fast path sends. */
async function fastApp (t: Parameters<typeof buildTestApp>[0], overrides = {}) {
  const app = await buildTestApp(t, smallSnapshot(), overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const answered: RequestLine[] = []
  app.fastPath?.onAnswer(answer => answered.push(answer))
  return { app, answered }
}

/** A listening app without the fast path: every answer comes through Fastify's route. */
async function referenceApp (t: Parameters<typeof buildTestApp>[0], overrides = {}) {
  const app = await buildTestApp(t, smallSnapshot(), { fastPath: false, ...overrides })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal(app.fastPath, null)
  return app
}

t.test('what the fast path answers, built, kept or cached, is byte for byte what the route answers', async t => {
  const { app, answered } = await fastApp(t)
  const reference = await referenceApp(t)
  const pages: Array<[string, string, Record<string, string>]> = [
    ['GET', `${EXPLORE}?companies=7`, {}],
    ['GET', `${EXPLORE}?companies=7&companies=9&limit=3&offset=2&x=%20y`, {}],
    ['GET', `${EXPLORE}?companies=&limit=abc&offset=-1&zeta=%E2%82%AC&alpha=1+2`, {}],
    ['GET', `${EXPLORE}?offset=123456789012345678901234567890`, {}],
    ['GET', `${EXPLORE}?limit=%D9%A5&offset=+1_0`, {}],
    ['GET', `${EXPLORE}?`, {}],
    ['GET', `${EXPLORE}?format=json&limit=2`, {}],
    ['GET', '/es/api/internal/explore/', {}],
    ['GET', '/%65n/api/internal/explore/?companies=7', {}],
    ['GET', `${EXPLORE}?companies=7`, { Accept: 'application/json; indent=2' }],
    ['GET', `${EXPLORE}?companies=7`, { Accept: 'text/html, application/json;q=0.5' }],
    ['GET', `${EXPLORE}?companies=7`, { Origin: 'https://a.example' }],
    ['HEAD', `${EXPLORE}?companies=9`, {}]
  ]
  for (const [method, url, headers] of pages) {
    const label = `${method} ${url} ${JSON.stringify(headers)}`
    const expected = await exchange(reference, method, url, headers)
    t.match(expected, /^HTTP\/1\.1 200 OK\r\n/, label)
    for (const attempt of ['built', 'built again and kept', 'cached']) {
      const before = answered.length
      t.equal(await exchange(app, method, url, headers), expected, `${attempt}: ${label}`)
      t.equal(answered.length, before + 1, `the fast path answered (${attempt}): ${label}`)
    }
  }
  t.match(answered.at(-1), { method: 'HEAD', statusCode: 200, url: `${EXPLORE}?companies=9` })
  t.ok(answered.every(answer => answer.responseTime >= 0))

  // The view's errors and Django's refusals of a page request: the fast path answers them too, the same bytes.
  const errors: Array<[string, string, Record<string, string>]> = [
    ['GET', `${EXPLORE}?companies=x`, {}],
    ['GET', `${EXPLORE}?companies=x`, { Accept: 'application/json; indent=4', Origin: 'https://a.example' }],
    ['HEAD', `${EXPLORE}?companies=1.5`, {}],
    ['GET', `${EXPLORE}?format=xml`, {}],
    ['GET', EXPLORE, { Accept: 'text/html' }],
    ['GET', EXPLORE, { Accept: '' }],
    ['GET', '/zz/api/internal/explore/', {}],
    ['GET', `${EXPLORE}?${Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&')}`, { Origin: 'https://a.example' }]
  ]
  for (const [method, url, headers] of errors) {
    const label = `${method} ${url.slice(0, 60)} ${JSON.stringify(headers)}`
    const before = answered.length
    const expected = await exchange(reference, method, url, headers)
    t.match(expected, /^HTTP\/1\.1 4\d\d /, label)
    t.equal(await exchange(app, method, url, headers), expected, label)
    t.equal(answered.length, before + 1, `the fast path answered: ${label}`)
  }

  // Any other method or path is Fastify's to answer, untouched.
  const others: Array<[string, string, Record<string, string>]> = [
    ['GET', '/EN/api/internal/explore/', {}],
    ['GET', '/en/api/internal/explore?companies=7', {}],
    ['POST', `${EXPLORE}?companies=7`, {}],
    ['OPTIONS', EXPLORE, {}]
  ]
  for (const [method, url, headers] of others) {
    const label = `${method} ${url.slice(0, 60)} ${JSON.stringify(headers)}`
    const before = answered.length
    t.equal(await exchange(app, method, url, headers), await exchange(reference, method, url, headers), label)
    t.equal(answered.length, before, `not the fast path's: ${label}`)
  }
})

t.test('with CORS for listed origins the fast path answers per Origin, as the route does', async t => {
  const overrides = { corsOrigin: ['https://a.example'] }
  const { app, answered } = await fastApp(t, overrides)
  const reference = await referenceApp(t, overrides)
  for (const origin of ['https://a.example', 'https://b.example']) {
    const expected = await exchange(reference, 'GET', `${EXPLORE}?companies=7`, { Origin: origin })
    t.match(expected, origin === 'https://a.example' ? /\r\naccess-control-allow-origin: https:\/\/a\.example\r\n/ : /^(?![^]*access-control-allow-origin)/)
    for (let i = 0; i < 3; i++) t.equal(await exchange(app, 'GET', `${EXPLORE}?companies=7`, { Origin: origin }), expected, `${origin}, answer ${i + 1}`)
    // The view's error carries the view's Vary; a refusal before the view, only CORS's.
    const fields = Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&')
    for (const url of [`${EXPLORE}?companies=x`, `${EXPLORE}?${fields}`]) {
      const refused = await exchange(reference, 'GET', url, { Origin: origin })
      t.match(refused, url.includes('f1000') ? /\r\nvary: Origin\r\n/ : /\r\nvary: Accept, Origin\r\n/)
      t.equal(await exchange(app, 'GET', url, { Origin: origin }), refused, `${origin}: ${url.slice(0, 60)}`)
    }
  }
  t.equal(answered.length, 10, 'every one of them on the fast path')
})

t.test('a conditional request gets its 304 on the fast path, built or cached', async t => {
  const { app, answered } = await fastApp(t)
  const reference = await referenceApp(t)
  const url = `${EXPLORE}?companies=8`
  const etag = /\r\netag: ([^\r]*)/i.exec(await exchange(app, 'GET', url))?.[1] as string
  await exchange(app, 'GET', url) // kept: the next answers come from the cache
  for (const method of ['GET', 'HEAD']) {
    const expected = await exchange(reference, method, url, { 'If-None-Match': etag })
    t.match(expected, /^HTTP\/1\.1 304 [^]*\r\netag: /)
    t.equal(await exchange(app, method, url, { 'If-None-Match': etag }), expected, `${method}, from the cache`)
  }
  t.equal(answered.filter(answer => answer.statusCode === 304).length, 2)
})

t.test('Django\'s refusals before the view are the fast path\'s too; other methods reach the route', async t => {
  const overrides = { allowedHosts: ['localhost'], maxUrlLength: 200 }
  const { app, answered } = await fastApp(t, overrides)
  const reference = await referenceApp(t, overrides)
  const url = `${EXPLORE}?companies=8`
  const evil = `GET ${url} HTTP/1.1\r\nHost: evil.test\r\nOrigin: https://a.example\r\nConnection: close\r\n\r\n`
  const refused = await rawRequest(app, evil)
  t.match(refused, /^HTTP\/1\.1 400 [^]*\r\n\r\n\{"detail":"Invalid Host header\."\}$/, 'a host not allowed')
  t.equal(refused.replace(/\r\nDate: [^\r]*/i, ''), (await rawRequest(reference, evil)).replace(/\r\nDate: [^\r]*/i, ''))
  const long = `${url}&${'x'.repeat(300)}`
  t.match(await exchange(app, 'GET', long), /^HTTP\/1\.1 414 /)
  t.equal(await exchange(app, 'GET', long), await exchange(reference, 'GET', long), 'a target too long')
  t.equal(answered.length, 3, 'answered on the fast path')
  t.match(await exchange(app, 'DELETE', url), /^HTTP\/1\.1 405 /)
  t.match(await exchange(app, 'OPTIONS', url), /^HTTP\/1\.1 200 [^]*"name":"Explore"/)
  t.equal(answered.length, 3, 'other methods through the route')
})

t.test('a new snapshot is never answered from the old one\'s pages', async t => {
  const { app, answered } = await fastApp(t)
  for (let i = 0; i < 3; i++) t.match(await exchange(app, 'GET', EXPLORE), /"count":25,/)
  await writeFile(app.snapshots.file, JSON.stringify({ languages: { en: [] } }))
  t.equal(await reloadFile(app), 'loaded')
  t.match(await exchange(app, 'GET', EXPLORE), /"count":0,/, 'the new snapshot\'s page, not the cached one')
  t.equal(answered.length, 4)
})

t.test('from the moment the app starts closing, Fastify answers', async t => {
  const app = await buildTestApp(t, smallSnapshot())
  // Registered after buildApp's own preClose hook, so it runs after it, while the server still listens.
  let duringClose = ''
  app.addHook('preClose', async () => { duringClose = await exchange(app, 'GET', EXPLORE) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const answered: RequestLine[] = []
  app.fastPath?.onAnswer(answer => answered.push(answer))
  t.match(await exchange(app, 'GET', EXPLORE), /^HTTP\/1\.1 200 /)
  t.equal(answered.length, 1)
  await app.close()
  t.match(duringClose, /^HTTP\/1\.1 503 /, 'Fastify\'s answer while it closes, not a page')
  t.equal(answered.length, 1, 'not through the fast path')
})

t.test('fast path answers are counted in the metrics under the explore route', async t => {
  const { app, answered } = await fastApp(t)
  for (let i = 0; i < 5; i++) await exchange(app, 'GET', EXPLORE)
  t.equal(answered.length, 5)
  const metrics = (await app.inject('/-/metrics')).body
  t.match(metrics, /explore_http_requests_total\{route="\/:lang\/api\/internal\/explore\/",method="GET",status="200"\} 5\n/)
})

t.test('no fast path when FAST_PATH is off; the page cache works without it', async t => {
  const app = await referenceApp(t)
  for (let i = 0; i < 3; i++) t.match(await exchange(app, 'GET', EXPLORE), /"count":25,/)
  const metrics = (await app.inject('/-/metrics')).body
  t.match(metrics, /explore_http_requests_total\{route="\/:lang\/api\/internal\/explore\/",method="GET",status="200"\} 3\n/, 'route answers counted by Fastify\'s hook')
})
