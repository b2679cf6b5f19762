// Which answers are tried again, the backoff's bounds, and Retry-After in both of its forms.
import t from 'tap'
import { BACKOFF_CAP_MS, backoffDelay, isRetryableStatus, parseRetryAfter } from '../../src/capture/retry-policy.js'

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
