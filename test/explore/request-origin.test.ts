import t from 'tap'
import { invalidHost } from '../../src/errors.js'
import { linkOrigin, requestHost, type OriginOptions } from '../../src/explore/request-origin.js'

const request = (headers: Record<string, string>, socket = {}) => ({ headers, socket })

/** What the app does: the first hook checks the host, the view builds links from it. */
function linkFor (req: ReturnType<typeof request>, options: OriginOptions): string {
  const host = requestHost(req, options)
  if (host === null) throw invalidHost()
  return linkOrigin({ ...req, linkHost: host }, options)
}
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
  const headers = { host: 'internal:3000', 'x-forwarded-host': 'news.example.com, proxy.local', 'x-forwarded-proto': 'https' }
  t.equal(linkFor(request(headers), direct), 'http://internal:3000')
  t.equal(linkFor(request(headers), { publicBaseUrl: null, trustProxy: true, allowedHosts: null }), 'https://news.example.com')
  t.equal(linkFor(request({ ...headers, 'x-forwarded-proto': 'ftp' }), { publicBaseUrl: null, trustProxy: true, allowedHosts: null }), 'http://news.example.com', 'Django: https or http')
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
  for (const host of ['example.com', 'evil.com', 'news.example.com.evil.com', 'notexample.org', '127.0.0.1']) {
    t.equal(requestHost(request({ host }), allowed), null, host)
    t.throws(() => linkFor(request({ host }), allowed), { code: 'EXPLORE_ERR_INVALID_HOST' })
  }
  t.equal(requestHost(request({ host: 'anything.test' }), { ...direct, allowedHosts: ['*'] }), 'anything.test')
  t.equal(requestHost(request({ host: 'internal', 'x-forwarded-host': 'evil.com' }), { ...allowed, trustProxy: true }), null, 'the forwarded host is the one checked')
})

t.test('Django\'s host syntax: anything else is a 400', async t => {
  for (const bad of ['bad_host', 'a b', 'x.com/path', 'x.com:port', '', '.', ':80', 'é.com', 'x.com@evil', '[::1']) {
    t.equal(requestHost(request({ host: bad }), direct), null, JSON.stringify(bad))
    t.throws(() => linkFor(request({ host: bad }), direct), { code: 'EXPLORE_ERR_INVALID_HOST', statusCode: 400, body: { detail: 'Invalid Host header.' } })
  }
  t.throws(() => linkFor(request({ host: 'ok.test', 'x-forwarded-host': 'bad_host' }), { publicBaseUrl: null, trustProxy: true, allowedHosts: null }), { code: 'EXPLORE_ERR_INVALID_HOST', statusCode: 400 })
})
