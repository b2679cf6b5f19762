// The capture's HTTP client against a real server: what is retried and what is not, timeouts, network
// errors, Retry-After, and an abort that ends a request in flight.
import t from 'tap'
import { SourceClient, type RetryNotice, type SourceClientOptions } from '../../src/capture/source-client.js'
import { freePort } from '../helpers.js'
import { frontServer } from './capture-fixtures.js'
import { CaptureError, NotExploreError } from '../../src/errors.js'

function client (overrides: Partial<SourceClientOptions> = {}): SourceClient {
  return new SourceClient({ concurrency: 2, rps: null, retries: 2, retryDelayMs: 1, timeoutMs: 5000, ...overrides })
}

const never = new AbortController().signal

t.test('a 4xx other than 429 is not retried; a 404 is "not an explore API"', async t => {
  const front = await frontServer(t, null, (request, response) => {
    response.writeHead(request.url === '/forbidden' ? 403 : 404, { 'content-type': 'application/json' }).end('{"detail":"No."}')
    return true
  })
  const source = client()
  await t.rejects(source.getJson(`${front.url}/forbidden`, never), new CaptureError(`GET ${front.url}/forbidden: 403 Forbidden: "{\\"detail\\":\\"No.\\"}" (not retried)`))
  await t.rejects(source.getJson(`${front.url}/missing`, never), NotExploreError)
  t.same(front.seen, ['/forbidden', '/missing'])
  t.same([source.stats.requests, source.stats.retries], [2, 0])
})

t.test('5xx, 429 and timeouts are retried, each reason counted; the last failure is the one reported', async t => {
  const front = await frontServer(t, null, (request, response, n) => {
    if (request.url === '/slow') return true // never answered: every try times out
    if (n === 1) response.writeHead(502).end()
    else if (n === 2) response.writeHead(429, { 'retry-after': '0' }).end()
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    return true
  })
  const notices: RetryNotice[] = []
  // The answered requests keep the default timeout: on a loaded machine one can take longer than 0.1 s.
  const source = client({ onRetry: notice => notices.push(notice) })
  t.same(await source.getJson(`${front.url}/flaky`, never), { ok: true })
  t.same(notices.map(n => [n.reason, n.retry, n.retryAfterMs]), [['502', 1, null], ['429', 2, 0]])
  t.same(Object.fromEntries(source.stats.retryReasons), { 502: 1, 429: 1 })
  t.equal(source.stats.requests, 3)
  const slow = client({ timeoutMs: 100 })
  await t.rejects(slow.getJson(`${front.url}/slow`, never), new CaptureError(`GET ${front.url}/slow: no complete answer within 0.1 s (3 tries; --retries 2)`))
  t.same(Object.fromEntries(slow.stats.retryReasons), { timeout: 2 })
  t.equal(slow.stats.requests, 3)
})

t.test('a connection refused is a network error, retried, then reported', async t => {
  const port = await freePort()
  const source = client({ retries: 1 })
  await t.rejects(source.getJson(`http://127.0.0.1:${port}/`, never), { message: new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/: cannot reach the source: .*ECONNREFUSED.* \\(2 tries; --retries 1\\)$`) })
  t.same([...source.stats.retryReasons.keys()], ['ECONNREFUSED'])
})

t.test('a Retry-After above the cap is cut to it and counted', async t => {
  const front = await frontServer(t, null, (_request, response, n) => {
    if (n === 1) response.writeHead(503, { 'retry-after': '3600' }).end()
    else response.writeHead(200).end('[]')
    return true
  })
  const controller = new AbortController()
  const source = client({ onRetry: () => { controller.abort(new Error('stopped while waiting')) } })
  // The wait itself (60 s) is not sat out: the abort that ends it is what is checked.
  await t.rejects(source.getJson(`${front.url}/`, controller.signal), { message: 'stopped while waiting' })
  t.equal(source.stats.cappedRetryAfters, 1)
})

t.test('an abort ends a request in flight with the abort\'s reason, not retried', async t => {
  const controller = new AbortController()
  const reason = new Error('interrupted')
  const front = await frontServer(t, null, () => {
    controller.abort(reason)
    return true
  })
  const source = client()
  await t.rejects(source.getJson(`${front.url}/`, controller.signal), reason)
  t.equal(front.seen.length, 1)
})

t.test('a 200 that is not JSON: "not an explore API", with the content type and the start of the body', async t => {
  const front = await frontServer(t, null, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`${'x'.repeat(100)}`)
    return true
  })
  await t.rejects(client().getJson(`${front.url}/`, never), new NotExploreError(`${front.url}/`, `the answer is not JSON (text/plain): "${'x'.repeat(80)}…"`))
})
