import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { linkOrigin, requestHost, type OriginOptions } from '../../src/explore/request-origin.js'
import { buildTestApp, EXPLORE, rawRequest } from '../helpers.js'

const request = (headers: Record<string, string>, socket = {}) => ({ headers, socket })

/** What the app does for a host it accepts: the check yields the host, the view builds links from it. */
function linkFor (req: ReturnType<typeof request>, options: OriginOptions): string {
  const host = requestHost(req, options)
  // Not the service's refusal (the app's answers to refused hosts are checked over HTTP below).
  if (host === null) throw new Error(`requestHost refused ${JSON.stringify(req.headers)}`)
  return linkOrigin({ ...req, linkHost: host }, options)
}

/**
 * What a listening app answers to these request heads (each on its own connection): status line and
 * body. The refusal is the service's own, a 400 with Django's detail, on every path and method.
 */
async function answersTo (app: FastifyInstance, heads: string[]): Promise<string[]> {
  const answers: string[] = []
  for (const head of heads) {
    const answer = await rawRequest(app, `${head}\r\nConnection: close\r\n\r\n`)
    answers.push(`${answer.slice(0, answer.indexOf('\r\n'))} ${answer.slice(answer.indexOf('\r\n\r\n') + 4)}`)
  }
  return answers
}

const REFUSED = 'HTTP/1.1 400 Bad Request {"detail":"Invalid Host header."}'

/** GET of a page (the fast path's), GET of another path, a POST: each refused before anything else. */
const headsFor = (hostLines: string) => [
  `GET ${EXPLORE}?companies=7&limit=2 HTTP/1.1\r\n${hostLines}`,
  `GET /nowhere HTTP/1.1\r\n${hostLines}`,
  `POST ${EXPLORE} HTTP/1.1\r\n${hostLines}`
]
const direct = { publicBaseUrl: null, trustProxy: false, allowedHosts: null }

t.test('links use the request\'s scheme and Host, case kept', async t => {
  t.equal(linkFor(request({ host: 'News.Example.com:8080' }), direct), 'http://News.Example.com:8080')
  t.equal(linkFor(request({ host: 'x.test' }, { encrypted: true }), direct), 'https://x.test')
  t.equal(linkFor(request({ host: '[::1]:3000' }), direct), 'http://[::1]:3000')
})

t.test('a configured public base URL wins', async t => {
  t.equal(linkFor(request({ host: 'internal:3000' }), { publicBaseUrl: 'https://news.example.com/replica', trustProxy: false, allowedHosts: null }), 'https://news.example.com/replica')
})

t.test('X-Forwarded-* count only when proxies are trusted', async t => {
  const headers = { host: 'internal:3000', 'x-forwarded-host': 'news.example.com', 'x-forwarded-proto': 'https' }
  const trusted = { publicBaseUrl: null, trustProxy: true, allowedHosts: null }
  t.equal(linkFor(request({ ...headers, 'x-forwarded-host': 'evil.example, news.example.com' }), direct), 'http://internal:3000')
  t.equal(linkFor(request(headers), trusted), 'https://news.example.com')
  t.equal(linkFor(request({ ...headers, 'x-forwarded-proto': 'ftp' }), trusted), 'http://news.example.com', 'Django: https or http')
  t.equal(linkFor(request({ ...headers, 'x-forwarded-proto': 'https, http' }), trusted), 'https://news.example.com', 'Django ≥ 4.1: X-Forwarded-Proto\'s first value')
  t.equal(linkFor(request({ ...headers, 'x-forwarded-proto': 'http, https' }), trusted), 'http://news.example.com')
})

t.test('a trusted X-Forwarded-Host is read whole, as Django does: several values are no host, refused', async t => {
  const trusted = { publicBaseUrl: null, trustProxy: true, allowedHosts: null }
  for (const forwarded of ['evil.example, news.example.com', 'news.example.com,news.example.com', ['evil.example', 'news.example.com']]) {
    t.equal(requestHost({ headers: { host: 'internal:3000', 'x-forwarded-host': forwarded }, socket: {} }, trusted), null, JSON.stringify(forwarded))
  }
  // A proxy that appends to the client's header (or a second header line, which Node joins with ", ").
  const app = await buildTestApp(t, undefined, { trustProxy: true, cacheMaxAge: 60 })
  for (const lines of ['X-Forwarded-Host: evil.example, news.example.com', 'X-Forwarded-Host: evil.example\r\nX-Forwarded-Host: news.example.com']) {
    t.same(await answersTo(app, headsFor(`Host: internal:3000\r\n${lines}`)), [REFUSED, REFUSED, REFUSED], lines)
  }
})

t.test('without a Host header (HTTP/1.0) the server\'s own address is used', async t => {
  t.equal(linkFor(request({}, { localAddress: '127.0.0.1', localPort: 3000 }), direct), 'http://127.0.0.1:3000')
  t.equal(linkFor(request({}, { localAddress: '::1', localPort: 3000 }), direct), 'http://[::1]:3000')
})

t.test('ALLOWED_HOSTS as Django reads it', async t => {
  const allowed = { ...direct, allowedHosts: ['news.example.com', '.example.org'] }
  for (const host of ['news.example.com', 'NEWS.example.com:8080', 'news.example.com.', 'example.org', 'a.b.example.org:1']) {
    t.equal(requestHost(request({ host }), allowed), host, host)
  }
  const refused = ['example.com', 'evil.com', 'news.example.com.evil.com', 'notexample.org', '127.0.0.1']
  for (const host of refused) t.equal(requestHost(request({ host }), allowed), null, host)
  t.equal(requestHost(request({ host: 'anything.test' }), { ...direct, allowedHosts: ['*'] }), 'anything.test')
  t.equal(requestHost(request({ host: 'internal', 'x-forwarded-host': 'evil.com' }), { ...allowed, trustProxy: true }), null, 'the forwarded host is the one checked')
})

t.test('a host ALLOWED_HOSTS does not name gets the service\'s 400 on every path; an allowed one its page', async t => {
  const heads = (host: string) => headsFor(`Host: ${host}`)
  const allowedHosts = ['news.example.com', '.example.org']
  const app = await buildTestApp(t, undefined, { allowedHosts })
  for (const host of ['example.com', 'evil.com', 'news.example.com.evil.com', 'notexample.org', '127.0.0.1']) {
    t.same(await answersTo(app, heads(host)), [REFUSED, REFUSED, REFUSED], host)
  }
  const [page] = await answersTo(app, heads('a.b.example.org:1'))
  t.match(page, /^HTTP\/1\.1 200 OK \{"count":8,"next":"http:\/\/a\.b\.example\.org:1\/en\/api\/internal\/explore\/\?companies=7&limit=2&offset=2"/)
  const proxied = await buildTestApp(t, undefined, { allowedHosts, trustProxy: true })
  const forwarded = 'Host: news.example.com\r\nX-Forwarded-Host: evil.com'
  t.same(await answersTo(proxied, headsFor(forwarded)), [REFUSED, REFUSED, REFUSED], 'a trusted X-Forwarded-Host is the one checked')
})

const BAD_SYNTAX = ['bad_host', 'a b', 'x.com/path', 'x.com:port', '', '.', ':80', 'é.com', 'x.com@evil', '[::1']

t.test('Django\'s host syntax: requestHost refuses anything else', async t => {
  for (const bad of BAD_SYNTAX) t.equal(requestHost(request({ host: bad }), direct), null, JSON.stringify(bad))
  t.equal(requestHost(request({ host: 'ok.test', 'x-forwarded-host': 'bad_host' }), { ...direct, trustProxy: true }), null, 'a trusted X-Forwarded-Host')
})

t.test('a Host of any other syntax gets the service\'s 400 on every path, with any host allowed', async t => {
  const app = await buildTestApp(t)
  for (const bad of BAD_SYNTAX) {
    // Sent as bytes: 'é' as its UTF-8 bytes, which Node passes on as latin1 text.
    t.same(await answersTo(app, headsFor(`Host: ${Buffer.from(bad).toString('latin1')}`)), [REFUSED, REFUSED, REFUSED], JSON.stringify(bad))
  }
  t.same(await answersTo(app, headsFor('Host: ok.test\r\nHost: ok.test')), [REFUSED, REFUSED, REFUSED], 'two Host headers')
  const proxied = await buildTestApp(t, undefined, { trustProxy: true })
  t.same(await answersTo(proxied, headsFor('Host: ok.test\r\nX-Forwarded-Host: bad_host')), [REFUSED, REFUSED, REFUSED], 'a trusted X-Forwarded-Host')
  const [page] = await answersTo(app, headsFor('Host: ok.test\r\nX-Forwarded-Host: bad_host'))
  t.match(page, /^HTTP\/1\.1 200 OK \{"count":/, 'an untrusted X-Forwarded-Host is not looked at')
})

t.test('a page whose links come from forwarded headers varies by them; with PUBLIC_BASE_URL or without TRUST_PROXY, by Accept alone', async t => {
  const varyOf = async (app: FastifyInstance, target: string, extra = ''): Promise<string> => {
    const answer = await rawRequest(app, `GET ${target} HTTP/1.1\r\nHost: internal:3000\r\nX-Forwarded-Host: news.example.com${extra}\r\nConnection: close\r\n\r\n`)
    return /\r\nvary: ([^\r]*)/i.exec(answer)?.[1] ?? '(none)'
  }
  const forwarded = 'Accept, X-Forwarded-Host, X-Forwarded-Proto'
  for (const fastPath of [true, false]) {
    const proxied = await buildTestApp(t, undefined, { trustProxy: true, cacheMaxAge: 60, fastPath })
    t.equal(await varyOf(proxied, EXPLORE), forwarded, `FAST_PATH=${fastPath}: a page`)
    const etag = /\r\netag: ([^\r]*)/i.exec(await rawRequest(proxied, `GET ${EXPLORE} HTTP/1.1\r\nHost: internal:3000\r\nX-Forwarded-Host: news.example.com\r\nConnection: close\r\n\r\n`))?.[1]
    t.equal(await varyOf(proxied, EXPLORE, `\r\nIf-None-Match: ${etag}`), forwarded, `FAST_PATH=${fastPath}: its 304`)
    t.equal(await varyOf(proxied, '/xx/api/internal/explore/'), 'Accept', `FAST_PATH=${fastPath}: an error has no links`)
  }
  t.equal(await varyOf(await buildTestApp(t, undefined, { trustProxy: true, publicBaseUrl: 'https://news.example.com' }), EXPLORE), 'Accept', 'PUBLIC_BASE_URL: links from it')
  t.equal(await varyOf(await buildTestApp(t, undefined, { cacheMaxAge: 60 }), EXPLORE), 'Accept', 'no TRUST_PROXY: as the original')
  const cors = await buildTestApp(t, undefined, { trustProxy: true, corsOrigin: ['https://a.example'] })
  t.equal(await varyOf(cors, EXPLORE), 'Accept, Origin, X-Forwarded-Host, X-Forwarded-Proto', 'with CORS\'s Origin')
})
