// What each page request gets when trouble is simulated: the delay sampler's distributions (measured on
// thousands of draws at fixed seeds, never against the clock), the failure rate and its reproducible
// sequence, and a request's own wishes, honoured only under CHAOS.
import t from 'tap'
import fc from 'fast-check'
import type { IncomingMessage } from 'node:http'
import { loadConfig, type Config, type DelaySpec } from '../../src/config.js'
import { readPageRequest, type PageRequest } from '../../src/explore/page-request.js'
import { DelaySampler, preferences, SimulatedTrouble, troubleWanted } from '../../src/explore/simulated-trouble.js'
import { steeringOf } from '../../src/explore/steering-fields.js'
import { Rng } from '../../src/generate/random-source.js'
import { runs } from '../property-runs.js'

function samples (spec: DelaySpec, n: number, seed = 42): number[] {
  const sampler = new DelaySampler(spec, new Rng(seed, 'delay'))
  return Array.from({ length: n }, () => sampler.sample())
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

t.test('DELAY_MS=100-400: 2,000 delays lie in the range, spread uniformly (Kolmogorov-Smirnov and buckets)', async t => {
  for (const seed of [1, 42, 2026]) {
    const delays = samples({ kind: 'uniform', min: 100, max: 400 }, 2000, seed)
    t.ok(delays.every(ms => Number.isInteger(ms) && ms >= 100 && ms <= 400), `seed ${seed}: every delay a whole ms in [100, 400]`)
    t.equal(Math.min(...delays), 100, `seed ${seed}: both ends are reached`)
    t.equal(Math.max(...delays), 400)
    // KS against the discrete uniform on 100..400: D below the 1% critical value, 1.63/√n.
    const sorted = [...delays].sort((a, b) => a - b)
    let d = 0
    for (let i = 0; i < sorted.length; i++) {
      const value = sorted[i] as number
      if (sorted[i + 1] === value) continue
      const expected = (value - 100 + 1) / 301
      d = Math.max(d, Math.abs((i + 1) / sorted.length - expected))
    }
    t.ok(d < 1.63 / Math.sqrt(2000), `seed ${seed}: KS D = ${d.toFixed(4)} < ${(1.63 / Math.sqrt(2000)).toFixed(4)}`)
    // Ten buckets of about 200: chi-square below the 1% critical value for 9 degrees of freedom.
    const buckets = new Array<number>(10).fill(0)
    for (const ms of delays) buckets[Math.min(9, Math.floor((ms - 100) / 30.1))]!++
    const chi2 = buckets.reduce((sum, count) => sum + (count - 200) ** 2 / 200, 0)
    t.ok(chi2 < 21.67, `seed ${seed}: buckets ${buckets.join(' ')}, chi-square ${chi2.toFixed(1)} < 21.67`)
  }
})

t.test('DELAY_MS=~150: a lognormal whose median is the one given', async t => {
  for (const seed of [1, 42, 2026]) {
    const delays = samples({ kind: 'lognormal', median: 150 }, 2001, seed)
    const m = median(delays)
    t.ok(m >= 142 && m <= 158, `seed ${seed}: median ${m} within 150 ± 5%`)
    t.ok(delays.every(ms => Number.isInteger(ms) && ms >= 0 && ms <= 600_000))
    // Skewed to the right, as latencies are: the mean above the median, some draws far above it.
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length
    t.ok(mean > m, `seed ${seed}: mean ${mean.toFixed(1)} > median`)
    t.ok(delays.filter(ms => ms > 300).length > 20, 'a tail beyond twice the median')
    // Its log is normal around log(150): about 68% within one sigma (0.5) of it.
    const within = delays.filter(ms => Math.abs(Math.log(ms / 150)) <= 0.5).length / delays.length
    t.ok(within > 0.64 && within < 0.72, `seed ${seed}: ${(within * 100).toFixed(1)}% within one sigma`)
  }
})

t.test('DELAY_MS=200: every delay is 200', async t => {
  t.ok(samples({ kind: 'fixed', ms: 200 }, 100).every(ms => ms === 200))
})

/**
 * A page request as the reader makes it of a raw request (nothing here touches a socket); header names
 * lower-cased and a repeated one joined, as Node does.
 */
function pageRequest (url: string, headers: Record<string, string> = {}, chaos = false): PageRequest {
  const joined: Record<string, string> = { host: 'localhost' }
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase()
    joined[key] = joined[key] === undefined ? value : `${joined[key]}, ${value}`
  }
  const raw = { url, headers: joined, socket: {} } as unknown as IncomingMessage
  const page = readPageRequest(raw, { allowedHosts: null, trustProxy: false, maxUrlLength: 8192, chaos })
  if (page === null) throw new Error(`not a page: ${url}`)
  return page
}

/** What `draw` is given: the page request, and its target as sent (steering fields and all). */
function sentPage (url: string, headers: Record<string, string> = {}, chaos = false): [PageRequest, string] {
  return [pageRequest(url, headers, chaos), url]
}

function troubles (overrides: Partial<Config>): SimulatedTrouble {
  const config = loadConfig({ overrides: { chaosSeed: 7, ...overrides } })
  return new SimulatedTrouble({ ...config, cors: config.corsOrigin, pageCacheBytes: 0 })
}

const PAGE = '/en/api/internal/explore/?companies=7'

/** The statuses of `n` requests' trouble: the failure's, or 200 for none. */
function failures (trouble: SimulatedTrouble, n: number): number[] {
  return Array.from({ length: n }, () => trouble.draw(...sentPage(PAGE))?.failure?.status ?? 200)
}

t.test('FAIL_RATE=0.2: 20% ± 2% of requests fail, the same ones on every run with the same seed', async t => {
  const first = failures(troubles({ failRate: 0.2, chaosSeed: 42 }), 5000)
  const share = first.filter(status => status === 503).length / first.length
  t.ok(share >= 0.18 && share <= 0.22, `${(share * 100).toFixed(2)}% failed`)
  t.same(new Set(first), new Set([200, 503]), 'FAIL_STATUS by default: 503')
  t.same(failures(troubles({ failRate: 0.2, chaosSeed: 42 }), 5000), first, 'the same sequence again')
  t.not(failures(troubles({ failRate: 0.2, chaosSeed: 43 }), 5000).join(), first.join(), 'another seed, another sequence')
  // Each kind draws from its own stream: adding a delay or a fault does not move the failures.
  t.same(failures(troubles({ failRate: 0.2, chaosSeed: 42, delayMs: { kind: 'uniform', min: 1, max: 9 }, fault: 'reset', faultRate: 0.5 }), 5000), first)
  for (const rate of [0.01, 0.5, 0.95]) {
    const got = failures(troubles({ failRate: rate }), 10_000).filter(status => status !== 200).length / 10_000
    t.ok(Math.abs(got - rate) < 0.015, `FAIL_RATE=${rate}: ${got}`)
  }
  t.ok(failures(troubles({ failRate: 1, failStatus: 429 }), 100).every(status => status === 429), 'FAIL_RATE=1: every one, with FAIL_STATUS')
})

t.test('FAULT_RATE: the share of requests the fault breaks, reproducibly', async t => {
  const faults = (seed: number) => {
    const trouble = troubles({ fault: 'truncate', faultRate: 0.3, chaosSeed: seed })
    return Array.from({ length: 5000 }, () => trouble.draw(...sentPage(PAGE))?.fault ?? null)
  }
  const first = faults(9)
  const share = first.filter(fault => fault === 'truncate').length / first.length
  t.ok(share > 0.28 && share < 0.32, `${(share * 100).toFixed(2)}% truncated`)
  t.same(faults(9), first)
})

t.test('nothing asked for: no trouble at all, and the app builds none', async t => {
  t.equal(troubleWanted(loadConfig()), false)
  t.equal(troubleWanted(loadConfig({ env: { FAULT: 'reset', FAULT_RATE: '0' } })), false, 'a fault at rate 0 is none')
  for (const env of [{ DELAY_MS: '1' }, { FAIL_RATE: '0.1' }, { FAULT: 'dribble' }, { CHAOS: 'true' }]) {
    t.equal(troubleWanted(loadConfig({ env })), true, JSON.stringify(env))
  }
  t.equal(troubles({ chaos: true }).draw(...sentPage(PAGE, {}, true)), null, 'CHAOS alone: nothing until a request asks')
})

t.test('a request\'s own wishes are honoured under CHAOS only, and never break the sequence', async t => {
  const wishes: Array<[string, Record<string, string>]> = [
    [`${PAGE}&__delay=500&__status=503`, {}],
    [PAGE, { Prefer: 'delay=500, status=503' }],
    [PAGE, { Prefer: 'respond-async, delay="500"; x=1', prefer: 'code=503' }]
  ]
  for (const [url, headers] of wishes) {
    const label = `${url} ${JSON.stringify(headers)}`
    // Without CHAOS: what DELAY_MS says (a constant 7 here), no failure.
    const plain = troubles({ delayMs: { kind: 'fixed', ms: 7 } }).draw(...sentPage(url, headers, false))
    t.same({ delayMs: plain?.delayMs, failure: plain?.failure }, { delayMs: 7, failure: null }, `without CHAOS, ignored: ${label}`)
    const steered = troubles({ delayMs: { kind: 'fixed', ms: 7 }, chaos: true }).draw(...sentPage(url, headers, true))
    t.equal(steered?.delayMs, 500, `under CHAOS, the delay asked: ${label}`)
    t.equal(steered?.failure?.status, 503, `under CHAOS, the status asked: ${label}`)
  }
  const chaos = troubles({ chaos: true, failRate: 1 })
  const draw = (url: string, headers: Record<string, string> = {}) => chaos.draw(...sentPage(url, headers, true))
  t.equal(draw(`${PAGE}&__status=200`), null, 'status=200 asks for no failure, whatever FAIL_RATE says')
  t.equal(draw(PAGE, { Prefer: 'status=200' }), null)
  t.equal(draw(`${PAGE}&__status=429`, { Prefer: 'status=500' })?.failure?.status, 429, 'the query wins over the header')
  t.equal(draw(`${PAGE}&__code=404`)?.failure?.status, 404, 'Prism\'s own __code')
  t.equal(draw(`${PAGE}&%5F%5Fstatus=403`)?.failure?.status, 403, 'the field decoded as Django decodes it')
  t.equal(draw(`${PAGE}&__status=200&__status=500`)?.failure?.status, 500, 'a repeated field: the last value, as QueryDict.get')
  for (const bad of ['418', '200x', '', '5003']) t.equal(draw(`${PAGE}&__status=${bad}`)?.failure?.status, 503, `__status=${bad}: ignored, FAIL_STATUS`)
  const delays = troubles({ chaos: true })
  for (const bad of ['-1', 'abc', '1.5', '600001', '']) t.equal(delays.draw(...sentPage(`${PAGE}&__delay=${bad}`, {}, true)), null, `__delay=${bad}: ignored`)
  t.equal(delays.draw(...sentPage(`${PAGE}&__delay=600000`, {}, true))?.delayMs, 600000)
  // The seeded sequence is drawn whatever a request asks: the 2nd request's draw is the 2nd draw.
  const sequence = (steer: boolean) => {
    const trouble = troubles({ chaos: true, failRate: 0.5, chaosSeed: 3 })
    return [0, 1, 2, 3, 4, 5].map(i => trouble.draw(...sentPage(i === 1 && steer ? `${PAGE}&__status=404` : PAGE, {}, true))?.failure?.status ?? 200)
  }
  const plain = sequence(false)
  const steered = sequence(true)
  t.equal(steered[1], 404)
  t.same([plain[0], ...plain.slice(2)], [steered[0], ...steered.slice(2)], 'the others as without the wish')
})

t.test('a failure is answered as DRF\'s exception for its status: its detail, Retry-After for 429 and 503', async t => {
  const answer = (status: number, headers: Record<string, string> = {}) => {
    const failure = troubles({ failRate: 1, failStatus: status as Config['failStatus'] }).draw(...sentPage(PAGE, headers))?.failure
    if (failure == null) throw new Error('no failure')
    return { status: failure.status, headers: failure.headers, body: String(failure.body) }
  }
  const details: Record<number, string> = {
    400: 'Malformed request.',
    403: 'You do not have permission to perform this action.',
    404: 'Not found.',
    429: 'Request was throttled. Expected available in 1 second.',
    500: 'A server error occurred.',
    503: 'Service temporarily unavailable, try again later.'
  }
  for (const [status, detail] of Object.entries(details)) {
    const got = answer(Number(status))
    t.equal(got.status, Number(status))
    t.equal(got.body, JSON.stringify({ detail }), `${status}: ${detail}`)
    const wait = status === '429' || status === '503' ? ['retry-after', '1'] : []
    t.same(got.headers, ['access-control-allow-origin', '*', 'allow', 'GET, HEAD, OPTIONS', 'vary', 'Accept', 'content-type', 'application/json', ...wait, 'content-length', String(got.body.length)], `${status}: the view's headers, CORS's first`)
  }
  t.equal(answer(503, { Accept: 'application/json; indent=2' }).body, '{\n  "detail": "Service temporarily unavailable, try again later."\n}', 'in the indentation negotiated')
  t.equal(answer(503, { Accept: 'text/html' }).body, '{"detail":"Service temporarily unavailable, try again later."}', 'compact when negotiation fails')
})

t.test('under CHAOS the steering fields are no part of the page: not in its target, not in its query', async t => {
  const cases: Array<[string, string]> = [
    ['/en/api/internal/explore/?companies=7&__delay=500', '/en/api/internal/explore/?companies=7'],
    ['/en/api/internal/explore/?__status=503&companies=7&__code=1&%5F%5Fdelay=5&__other=1', '/en/api/internal/explore/?companies=7&__other=1'],
    ['/en/api/internal/explore/?__delay=500', '/en/api/internal/explore/'],
    ['/en/api/internal/explore/?companies=7', '/en/api/internal/explore/?companies=7']
  ]
  for (const [target, plain] of cases) {
    const steered = pageRequest(target, {}, true)
    t.equal(steered.url, plain, target)
    t.notOk(Object.keys(steered.query).some(key => ['__delay', '__status', '__code'].includes(key)), `no steering field in the query: ${target}`)
    const ordinary = pageRequest(target, {}, false)
    t.equal(ordinary.url, target, `without CHAOS, the target as sent: ${target}`)
  }
  t.same(steeringOf('/en/api/internal/explore/?__delay=5&__delay=9'), { __delay: '9', __status: undefined, __code: undefined })
  t.same(steeringOf(`/en/api/internal/explore/?__delay=5&${'f=1&'.repeat(1000)}`), {}, 'a query Django refuses steers nothing')
  t.same(Object.keys(pageRequest('/en/api/internal/explore/?__delay=5&__x=1', {}, false).query), ['__delay', '__x'], 'without CHAOS: ordinary parameters')
})

/** The first port of the Prefer reader, kept as the oracle of the one walk. */
function firstPort (header: string | string[] | undefined): { delay?: string, status?: string } {
  const wishes: { delay?: string, status?: string } = {}
  if (header === undefined) return wishes
  for (const preference of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name = '', value = ''] = (preference.split(';')[0] as string).split('=').map(part => part.trim())
    const key = name.toLowerCase()
    const unquoted = value.replace(/^"(.*)"$/, '$1')
    if (key === 'delay') wishes.delay = unquoted
    else if (key === 'status' || key === 'code') wishes.status = unquoted
  }
  return wishes
}

t.test('every Prefer header gets the first port\'s wishes, read in one walk', async t => {
  const piece = fc.constantFrom(',', ';', '=', ' ', '\t', '\u00a0', '"', 'delay', 'DELAY', 'status', 'Code', 'code', 'respond-async',
    '500', '"500"', '503', '200', 'x', 'delays', '\u0130')
  fc.assert(fc.property(fc.oneof(fc.array(piece, { maxLength: 14 }).map(pieces => pieces.join('')), fc.array(fc.array(piece, { maxLength: 6 }).map(pieces => pieces.join('')), { maxLength: 3 })), header =>
    JSON.stringify(preferences(header)) === JSON.stringify(firstPort(header))
  ), { numRuns: runs(20_000) })
  t.same(preferences(`${','.repeat(15_000)}delay=5`), { delay: '5' }, '15 KB of commas, then a wish')
})
