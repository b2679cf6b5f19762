import t from 'tap'
import { linkOrigin, requestHost } from '../../src/explore/request-origin.js'

const request = (headers: Record<string, string>, socket = {}) => ({ headers, socket })
const direct = { publicBaseUrl: null, trustProxy: false }

t.test('links use the request\'s scheme and Host, case kept', async t => {
  t.equal(linkOrigin(request({ host: 'News.Example.com:8080' }), direct), 'http://News.Example.com:8080')
  t.equal(linkOrigin(request({ host: 'x.test' }, { encrypted: true }), direct), 'https://x.test')
  t.equal(linkOrigin(request({ host: '[::1]:3000' }), direct), 'http://[::1]:3000')
})

t.test('a configured public base URL wins', async t => {
  t.equal(linkOrigin(request({ host: 'internal:3000' }), { publicBaseUrl: 'https://news.example.com/replica', trustProxy: false }), 'https://news.example.com/replica')
})

t.test('X-Forwarded-* count only when proxies are trusted', async t => {
  const headers = { host: 'internal:3000', 'x-forwarded-host': 'news.example.com, proxy.local', 'x-forwarded-proto': 'https' }
  t.equal(linkOrigin(request(headers), direct), 'http://internal:3000')
  t.equal(linkOrigin(request(headers), { publicBaseUrl: null, trustProxy: true }), 'https://news.example.com')
  t.equal(linkOrigin(request({ ...headers, 'x-forwarded-proto': 'ftp' }), { publicBaseUrl: null, trustProxy: true }), 'http://news.example.com', 'Django: https or http')
})

t.test('without a Host header (HTTP/1.0) the server\'s own address is used', async t => {
  t.equal(linkOrigin(request({}, { localAddress: '127.0.0.1', localPort: 3000 }), direct), 'http://127.0.0.1:3000')
  t.equal(linkOrigin(request({}, { localAddress: '::1', localPort: 3000 }), direct), 'http://[::1]:3000')
})

t.test('Django\'s host syntax: anything else is a 400', async t => {
  for (const bad of ['bad_host', 'a b', 'x.com/path', 'x.com:port', '', '.', ':80', 'é.com', 'x.com@evil', '[::1']) {
    t.equal(requestHost(request({ host: bad }), false), null, JSON.stringify(bad))
    t.throws(() => linkOrigin(request({ host: bad }), direct), { code: 'EXPLORE_ERR_INVALID_HOST', statusCode: 400, body: { detail: 'Invalid Host header.' } })
  }
  t.throws(() => linkOrigin(request({ host: 'ok.test', 'x-forwarded-host': 'bad_host' }), { publicBaseUrl: null, trustProxy: true }), { code: 'EXPLORE_ERR_INVALID_HOST', statusCode: 400 })
})
