// The capture's HTTP client against a real server: what is retried and what is not, timeouts, network
// errors, Retry-After, and an abort that ends a request in flight.
import t from 'tap'
import { gzipSync } from 'node:zlib'
import { readCaptureOptions, type CaptureOptions } from '../../src/capture/capture-options.js'
import { SourceClient, type RetryNotice, type SourceClientOptions } from '../../src/capture/source-client.js'
import { freePort } from '../helpers.js'
import { frontServer } from './capture-fixtures.js'
import { CaptureError, NotExploreError } from '../../src/errors.js'

function client (overrides: Partial<SourceClientOptions> = {}): SourceClient {
  return new SourceClient({ concurrency: 2, rps: null, retries: 2, retryDelayMs: 1, timeoutMs: 5000, maxBodyBytes: 32 * 1024 * 1024, ...overrides })
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

t.test('an answer larger than --max-body-mb is read no further than the bound, counted as it is decoded, and not retried', async t => {
  let written = 0
  // 64 MiB of JSON in 64 KiB once decoded; an endless body with no length.
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"x":"'), Buffer.alloc(64 * 1024 * 1024, 0x61), Buffer.from('"}')]))
  const front = await frontServer(t, null, (request, response) => {
    if (request.url === '/declared') {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 * 1024 * 1024 }).end(Buffer.alloc(2 * 1024 * 1024, 0x20))
    } else if (request.url === '/gzip') {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb)
    } else {
      response.writeHead(200, { 'content-type': 'application/json' })
      const more = (): void => {
        for (let room = true; room && !response.destroyed;) {
          written += 64 * 1024
          room = response.write(Buffer.alloc(64 * 1024, 0x20))
        }
        if (!response.destroyed) response.once('drain', more)
      }
      more()
    }
    return true
  })
  const source = client({ maxBodyBytes: 1024 * 1024 })
  for (const path of ['/declared', '/gzip', '/endless']) {
    await t.rejects(source.getJson(`${front.url}${path}`, never),
      new CaptureError(`GET ${front.url}${path}: the answer is more than --max-body-mb allows (1 MiB): not read further (not retried)`), path)
  }
  t.same([source.stats.requests, source.stats.retries], [3, 0])
  t.ok(written < 16 * 1024 * 1024, `the endless body stopped: ${written} bytes written into the socket before it closed`)
})

t.test('without --rps, requests start at most 10 a second; --rps 0 lifts it', async t => {
  const starts: number[] = []
  const front = await frontServer(t, null, (_request, response) => {
    starts.push(performance.now())
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    return true
  })
  const options = await readCaptureOptions(['--from', front.url, '--languages', 'en', '--companies', '1', '--out', 'x.jsonl']) as CaptureOptions
  const source = new SourceClient(options)
  await Promise.all(Array.from({ length: 11 }, async (_, n) => await source.getJson(`${front.url}/${n}`, never)))
  t.ok(starts.at(-1)! - starts[0]! >= 990, `11 requests over ${Math.round(starts.at(-1)! - starts[0]!)} ms: 10 intervals of 100 ms`)
  const lifted = await readCaptureOptions(['--from', front.url, '--languages', 'en', '--companies', '1', '--out', 'x.jsonl', '--rps', '0']) as CaptureOptions
  t.equal(lifted.rps, null)
})
