// Hardening of the app as a whole: hosts, limits, headers, errors.
import t from 'tap'
import { buildTestApp, EXPLORE, makeItem, smallSnapshot } from './helpers.js'

t.test('ALLOWED_HOSTS: another Host gets 400 and never appears in a link', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { allowedHosts: ['news.example.com', '.example.org'] })
  const ok = await app.inject({ url: EXPLORE, headers: { host: 'news.example.com' } })
  t.equal(JSON.parse(ok.body).next, `http://news.example.com${EXPLORE}?limit=10&offset=10`)
  t.equal((await app.inject({ url: EXPLORE, headers: { host: 'cdn.example.org:8443' } })).statusCode, 200)
  for (const url of [EXPLORE, '/-/status', '/nowhere']) {
    const res = await app.inject({ url, headers: { host: 'evil.test' } })
    t.equal(res.statusCode, 400, url)
    t.same(JSON.parse(res.body), { detail: 'Invalid Host header.' })
    t.notMatch(res.body, 'evil')
  }
  const proxied = await buildTestApp(t, smallSnapshot(), { allowedHosts: ['news.example.com'], trustProxy: true })
  t.equal((await proxied.inject({ url: EXPLORE, headers: { host: 'news.example.com', 'x-forwarded-host': 'evil.test' } })).statusCode, 400, 'the forwarded host is checked when trusted')
})

t.test('a request target longer than MAX_URL_LENGTH: 414', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { maxUrlLength: 200 })
  t.equal((await app.inject(`${EXPLORE}?q=${'a'.repeat(150)}`)).statusCode, 200)
  const res = await app.inject(`${EXPLORE}?q=${'a'.repeat(200)}`)
  t.equal(res.statusCode, 414)
  t.same(JSON.parse(res.body), { detail: 'URI Too Long.' })
})

t.test('no header reveals the server or its versions', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject(EXPLORE)
  t.equal(res.headers.server, undefined)
  t.equal(res.headers['x-powered-by'], undefined)
})

t.test('__proto__ and constructor in a snapshot change no prototype and are not served', async t => {
  const raw = JSON.stringify({ languages: { en: [makeItem(1, '2024-01-01', [1])] } })
    .replace('"pk":1,', '"pk":1,"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},')
  const app = await buildTestApp(t, raw)
  const res = await app.inject(EXPLORE)
  t.equal(res.statusCode, 200)
  t.notMatch(res.body, 'polluted')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal((Object.prototype as Record<string, unknown>).polluted, undefined)
})

t.test('an unexpected failure answers 500 with no internals', async t => {
  const app = await buildTestApp(t)
  app.snapshots.current = () => { throw new Error('secret internal detail at /srv/secret/path.ts:12') }
  const res = await app.inject(EXPLORE)
  t.equal(res.statusCode, 500)
  t.equal(res.body, '{"detail":"A server error occurred."}')
  t.equal(res.headers['content-type'], 'application/json')
})
