// The capture's HTTP client (src/capture/source-client.ts) and its parts: the retry policy and the request gate.
import t from 'tap'
import { gzipSync } from 'node:zlib'
import { readCaptureOptions, type CaptureOptions } from '../../src/capture/capture-options.js'
import { RequestGate } from '../../src/capture/request-gate.js'
import { BACKOFF_CAP_MS, backoffDelay, isRetryableStatus, parseRetryAfter } from '../../src/capture/retry-policy.js'
import { SourceClient, type RetryNotice, type SourceClientOptions } from '../../src/capture/source-client.js'
import { CaptureError, NotExploreError } from '../../src/errors.js'
import { freePort } from '../helpers.js'
import { frontServer } from './capture-fixtures.js'

// src/capture/retry-policy.ts: which answers are tried again, the backoff's bounds, and Retry-After in both of its forms.
t.test('5xx and 429 are retried; other statuses are not', async t => {
  t.same([429, 500, 502, 503, 504, 599].map(isRetryableStatus), [true, true, true, true, true, true])
  t.same([200, 301, 400, 401, 403, 404, 408, 410].map(isRetryableStatus), [false, false, false, false, false, false, false, false])
})

t.test('backoff: up to base · 2^(retry-1), capped, jittered over the whole range', async t => {
  t.equal(backoffDelay(1, 500, () => 1), 500)
  t.equal(backoffDelay(3, 500, () => 1), 2000)
  t.equal(backoffDelay(3, 500, () => 0), 0, 'full jitter: as low as nothing')
  t.equal(backoffDelay(3, 500, () => 0.5), 1000)
  t.equal(backoffDelay(30, 500, () => 1), BACKOFF_CAP_MS, 'never past the cap')
})

t.test('Retry-After: seconds, an HTTP date, the past, and what is not one', async t => {
  const now = Date.parse('2026-11-20T09:30:00Z')
  t.equal(parseRetryAfter('120', now), 120_000)
  t.equal(parseRetryAfter(' 0 ', now), 0)
  t.equal(parseRetryAfter('Fri, 20 Nov 2026 09:30:05 GMT', now), 5000)
  t.equal(parseRetryAfter('Friday, 20-Nov-26 09:30:07 GMT', now), 7000, 'the obsolete RFC 850 form')
  t.equal(parseRetryAfter('Fri, 20 Nov 2026 09:00:00 GMT', now), 0, 'a date past is no wait')
  t.equal(parseRetryAfter(null, now), null)
  for (const bad of ['-1', '1.5', 'soon', '', '2026-11-20']) t.equal(parseRetryAfter(bad, now), null, JSON.stringify(bad))
})

// src/capture/request-gate.ts: no more in flight than allowed, starts spaced by the rate, pauses, and waits an abort ends.
t.test('at most N in flight; a released slot goes to the first waiting request', async t => {
  const gate = new RequestGate(2, null)
  const signal = new AbortController().signal
  const order: string[] = []
  const a = await gate.enter(signal)
  const b = await gate.enter(signal)
  const c = gate.enter(signal).then(release => { order.push('c'); return release })
  const d = gate.enter(signal).then(release => { order.push('d'); return release })
  await Promise.resolve()
  t.same(order, [], 'two in flight: the others wait')
  b()
  b()
  const releaseC = await c
  t.same(order, ['c'], 'one release, one slot, even when released twice')
  a()
  ;(await d)()
  releaseC()
  t.same(order, ['c', 'd'])
  ;(await gate.enter(signal))()
})

t.test('a slot handed over is still taken: the next request waits for it', async t => {
  const gate = new RequestGate(1, null)
  const signal = new AbortController().signal
  const first = await gate.enter(signal)
  const second = gate.enter(signal)
  first()
  const releaseSecond = await second
  let third = false
  const entered = gate.enter(signal).then(release => { third = true; return release })
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(third, 'one slot, held by the second request')
  releaseSecond()
  ;(await entered)()
  t.ok(third)
})

t.test('an abort ends a wait for a slot with the abort\'s reason, and frees its place in the line', async t => {
  const gate = new RequestGate(1, null)
  const held = await gate.enter(new AbortController().signal)
  const controller = new AbortController()
  const waiting = gate.enter(controller.signal)
  const reason = new Error('stop')
  controller.abort(reason)
  await t.rejects(waiting, reason)
  held()
  const next = await gate.enter(new AbortController().signal)
  next()
})

t.test('a pause holds every request back; an abort ends that wait too', async t => {
  const gate = new RequestGate(4, null)
  gate.pause(60_000)
  const controller = new AbortController()
  const waiting = gate.enter(controller.signal)
  const reason = new Error('interrupted')
  setImmediate(() => controller.abort(reason))
  await t.rejects(waiting, reason, 'the pause was being waited out')
  const free = new RequestGate(1, null)
  free.pause(0)
  ;(await free.enter(new AbortController().signal))()
})

t.test('a rate: the starts are spaced', async t => {
  // 100 per second: each start at least 10 ms after the one before, in the order asked. Measured on
  // performance.now(), the clock the gate reads: a start is taken on it no sooner than the rate allows, and
  // noted here a few microtasks later, so a gap can look short by those microtasks (a pause of the collector
  // among them at worst), hence 2 ms of slack. Without the rate the 20 starts come within a millisecond in all;
  // at half the rate they would take 95 ms, not 190.
  const rate = 100
  const interval = 1000 / rate
  const slack = 2
  const gate = new RequestGate(4, rate)
  const signal = new AbortController().signal
  const asked = Array.from({ length: 20 }, (_, i) => i + 1)
  const starts: Array<{ n: number, at: number }> = []
  await Promise.all(asked.map(async n => {
    const release = await gate.enter(signal)
    starts.push({ n, at: performance.now() })
    release()
  }))
  // Timers fire on the loop's millisecond clock, so some wake a fraction early: in the order asked all the same.
  t.same(starts.map(start => start.n), asked)
  const gaps = starts.slice(1).map((start, i) => Math.round((start.at - starts[i]!.at) * 100) / 100)
  t.same(gaps.filter(gap => gap < interval - slack), [], `no two starts closer than ${interval} ms (gaps: ${gaps.join(', ')})`)
  const span = starts.at(-1)!.at - starts[0]!.at
  t.ok(span >= (asked.length - 1) * interval - slack, `${asked.length} starts take at least ${(asked.length - 1) * interval} ms (took ${span.toFixed(1)})`)
})

t.test('a request aborted while in line for its start leaves at once: the ones behind it still start, in order', async t => {
  // 10 per second: the second waits 100 ms for its start, the third waits in line behind it.
  const gate = new RequestGate(4, 10)
  const signal = new AbortController().signal
  const controller = new AbortController()
  const starts: string[] = []
  const enter = async (name: string, own = signal): Promise<void> => { const release = await gate.enter(own); starts.push(name); release() }
  const first = enter('first')
  const second = enter('second')
  const third = enter('third', controller.signal)
  const fourth = enter('fourth')
  await first
  await new Promise(resolve => setImmediate(resolve))
  const reason = new Error('stop')
  controller.abort(reason)
  await t.rejects(third, reason)
  t.same(starts, ['first'], 'the aborted one left while the one ahead of it still waited')
  await Promise.all([second, fourth])
  t.same(starts, ['first', 'second', 'fourth'])
})

// src/capture/source-client.ts against a real server: retries, timeouts, network errors, Retry-After, an abort in flight.
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
