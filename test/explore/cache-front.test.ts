// The front over real HTTP: what it answers, built or cached, is byte for byte what the route answers
// (an app with the page cache off has no front), and whatever it must not answer reaches Fastify.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { writeFile } from 'node:fs/promises'
import type { FrontAnswer } from '../../src/explore/cache-front.js'
import { pageCacheOf } from '../../src/explore/page-cache.js'
import { buildTestApp, EXPLORE, rawRequest, smallSnapshot } from '../helpers.js'

/** A whole HTTP/1.1 exchange on its own connection; the answer without its Date header. */
async function exchange (app: FastifyInstance, method: string, url: string, headers: Record<string, string> = {}): Promise<string> {
  const lines = [`${method} ${url} HTTP/1.1`, 'Host: localhost', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  const answer = await rawRequest(app, `${lines.join('\r\n')}\r\n\r\n`)
  return answer.replace(/\r\nDate: [^\r]*/i, '')
}

/** The app listening, and the answers its front sends. */
async function frontedApp (t: Parameters<typeof buildTestApp>[0], overrides = {}) {
  const app = await buildTestApp(t, smallSnapshot(), overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const fronted: FrontAnswer[] = []
  app.cacheFront?.onAnswer(answer => fronted.push(answer))
  return { app, fronted }
}

/** A listening app without the front (page cache off): every answer comes from the route. */
async function referenceApp (t: Parameters<typeof buildTestApp>[0], overrides = {}) {
  const app = await buildTestApp(t, smallSnapshot(), { pageCacheMb: 0, ...overrides })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal(app.cacheFront, null)
  return app
}

t.test('what the front answers, built or cached, is byte for byte what the route answers', async t => {
  const { app, fronted } = await frontedApp(t)
  const reference = await referenceApp(t)
  const pages: Array<[string, string, Record<string, string>]> = [
    ['GET', `${EXPLORE}?companies=7`, {}],
    ['GET', `${EXPLORE}?companies=7&companies=9&limit=3&offset=2&x=%20y`, {}],
    ['GET', `${EXPLORE}?companies=&limit=abc&offset=-1&zeta=%E2%82%AC&alpha=1+2`, {}],
    ['GET', `${EXPLORE}?offset=123456789012345678901234567890`, {}],
    ['GET', `${EXPLORE}?`, {}],
    ['GET', `${EXPLORE}?format=json&limit=2`, {}],
    ['GET', '/es/api/internal/explore/', {}],
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
      const before = fronted.length
      t.equal(await exchange(app, method, url, headers), expected, `${attempt}: ${label}`)
      t.equal(fronted.length, before + 1, `the front answered (${attempt}): ${label}`)
    }
  }
  t.match(fronted.at(-1), { method: 'HEAD', statusCode: 200, url: `${EXPLORE}?companies=9` })
  t.ok(fronted.every(answer => /^req-[0-9a-z]+$/.test(answer.reqId) && answer.responseTime >= 0))
  t.equal(new Set(fronted.map(answer => answer.reqId)).size, fronted.length, 'request ids are unique')

  // Anything but a 200, and any other spelling of the path, is the route's to answer.
  const others: Array<[string, string, Record<string, string>]> = [
    ['GET', `${EXPLORE}?companies=x`, {}],
    ['GET', `${EXPLORE}?format=xml`, {}],
    ['GET', EXPLORE, { Accept: 'text/html' }],
    ['GET', EXPLORE, { Accept: '' }],
    ['GET', '/zz/api/internal/explore/', {}],
    ['GET', '/EN/api/internal/explore/', {}],
    ['GET', '/%65n/api/internal/explore/?companies=7', {}],
    ['GET', '/en/api/internal/explore?companies=7', {}],
    ['GET', `${EXPLORE}?companies=7#top`, {}],
    ['GET', `${EXPLORE}?${Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&')}`, {}],
    ['POST', `${EXPLORE}?companies=7`, {}],
    ['OPTIONS', EXPLORE, {}]
  ]
  for (const [method, url, headers] of others) {
    const label = `${method} ${url.slice(0, 60)} ${JSON.stringify(headers)}`
    const before = fronted.length
    t.equal(await exchange(app, method, url, headers), await exchange(reference, method, url, headers), label)
    t.equal(fronted.length, before, `not the front's: ${label}`)
  }
})

t.test('with CORS for listed origins the front keeps to cached pages', async t => {
  const overrides = { corsOrigin: ['https://a.example'] }
  const { app, fronted } = await frontedApp(t, overrides)
  const reference = await referenceApp(t, overrides)
  for (const origin of ['https://a.example', 'https://b.example']) {
    const expected = await exchange(reference, 'GET', `${EXPLORE}?companies=7`, { Origin: origin })
    t.equal(await exchange(app, 'GET', `${EXPLORE}?companies=7`, { Origin: origin }), expected)
    t.equal(await exchange(app, 'GET', `${EXPLORE}?companies=7`, { Origin: origin }), expected)
    const before = fronted.length
    t.equal(await exchange(app, 'GET', `${EXPLORE}?companies=7`, { Origin: origin }), expected, `cached for ${origin}`)
    t.equal(fronted.length, before + 1)
  }
  t.equal(fronted.length, 2, 'only the cached answers went through the front')
})

t.test('what the front must not answer reaches the route', async t => {
  const { app, fronted } = await frontedApp(t, { allowedHosts: ['localhost'], maxUrlLength: 200 })
  const url = `${EXPLORE}?companies=8`
  const etag = /\r\netag: ([^\r]*)/i.exec(await exchange(app, 'GET', url))?.[1] as string
  t.equal(fronted.length, 1)

  t.match(await exchange(app, 'GET', url, { 'If-None-Match': etag }), /^HTTP\/1\.1 304 /, 'a conditional request gets its 304 from the route')
  t.match(await rawRequest(app, `GET ${url} HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n`), /^HTTP\/1\.1 400 /, 'a host not allowed')
  t.match(await exchange(app, 'DELETE', url), /^HTTP\/1\.1 405 /)
  t.match(await exchange(app, 'OPTIONS', url), /^HTTP\/1\.1 200 [^]*"name":"Explore"/)
  t.match(await exchange(app, 'GET', `${url}&${'x'.repeat(300)}`), /^HTTP\/1\.1 414 /)
  t.equal(fronted.length, 1, 'none of these went through the front')
})

t.test('a new snapshot is never answered from the old one\'s pages', async t => {
  const { app } = await frontedApp(t)
  for (let i = 0; i < 3; i++) t.match(await exchange(app, 'GET', EXPLORE), /"count":25,/)
  const before = pageCacheOf(app.snapshots.current(), 1).size
  t.equal(before, 1, 'the page is cached')
  await writeFile(app.snapshots.file, JSON.stringify({ languages: { en: [] } }))
  t.equal(await app.snapshots.reload(), 'loaded')
  t.match(await exchange(app, 'GET', EXPLORE), /"count":0,/, 'the new snapshot\'s page, not the cached one')
})

t.test('while the app closes, Fastify answers (and its close is not held up)', async t => {
  const { app, fronted } = await frontedApp(t)
  await exchange(app, 'GET', EXPLORE)
  t.equal(fronted.length, 1)
  t.equal(app.cacheFront?.open, true)
  await app.close()
  t.equal(app.cacheFront?.open, false)
})

t.test('front answers are counted in the metrics under the explore route', async t => {
  const { app, fronted } = await frontedApp(t)
  for (let i = 0; i < 5; i++) await exchange(app, 'GET', EXPLORE)
  t.equal(fronted.length, 5)
  const metrics = (await app.inject('/-/metrics')).body
  t.match(metrics, /explore_http_requests_total\{route="\/:lang\/api\/internal\/explore\/",method="GET",status="200"\} 5\n/)
})

t.test('no front when the page cache is off', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { pageCacheMb: 0 })
  t.equal(app.cacheFront, null)
})
