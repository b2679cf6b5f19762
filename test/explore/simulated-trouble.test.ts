// What each page request gets when trouble is simulated: the delay sampler's distributions (measured on
// thousands of draws at fixed seeds, never against the clock), the failure rate and its reproducible
// sequence, and a request's own wishes, honoured only under CHAOS.
import t from 'tap'
import fc from 'fast-check'
import type { IncomingMessage } from 'node:http'
import { loadConfig, type Config, type DelaySpec } from '../../src/config.js'
import { readPageRequest, type PageRequest } from '../../src/explore/page-request.js'
import { Worker } from 'node:worker_threads'
import { ReplayCounts, REPLAY_KEYS, RequestDigest } from '../../src/explore/replay-counts.js'
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

const EXPLORE_PAGE = '/en/api/internal/explore/'
const PAGE = `${EXPLORE_PAGE}?companies=7`

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
  // CHAOS_REPLAY=order: the seeded sequence is drawn whatever a request asks: the 2nd request's draw is the 2nd draw.
  const sequence = (steer: boolean, chaosReplay: Config['chaosReplay']) => {
    const trouble = troubles({ chaos: true, failRate: 0.5, chaosSeed: 3, chaosReplay })
    return [0, 1, 2, 3, 4, 5].map(i => trouble.draw(...sentPage(i === 1 && steer ? `${PAGE}&__status=404` : PAGE, {}, true))?.failure?.status ?? 200)
  }
  const plain = sequence(false, 'order')
  const steered = sequence(true, 'order')
  t.equal(steered[1], 404)
  t.same([plain[0], ...plain.slice(2)], [steered[0], ...steered.slice(2)], 'by order: the others as without the wish')
  // By request (the default), a steered request is a request of its own: the plain one's askings go on as before.
  const byRequest = sequence(false, 'request')
  const steeredByRequest = sequence(true, 'request')
  t.equal(steeredByRequest[1], 404)
  t.same([steeredByRequest[0], ...steeredByRequest.slice(2)], byRequest.slice(0, 5), 'by request: its askings unmoved')
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

/** Each (request, asking) → the trouble it drew, for draws made in `order` (indices into `asks`). */
function troubleByAsking (trouble: SimulatedTrouble, asks: readonly string[], order: readonly number[]): Map<string, string> {
  const seen = new Map<string, string>()
  const askings = new Map<string, number>()
  for (const i of order) {
    const url = asks[i] as string
    const drawn = trouble.draw(...sentPage(url, {}, true))
    const asking = askings.get(url) ?? 0
    askings.set(url, asking + 1)
    if (trouble.replay === 'request' && trouble.lastDraw !== asking) t.fail(`${url}: draw ${trouble.lastDraw}, not its asking ${asking}`)
    seen.set(`${url} #${asking}`, JSON.stringify([drawn?.delayMs, drawn?.delayBy, drawn?.failure?.status, drawn?.failureBy, drawn?.fault]))
  }
  return seen
}

/** `asks`' indices shuffled by `seed`, each request's own askings kept in their order (a retry comes after its first). */
function shuffledAskings (asks: readonly string[], seed: number): number[] {
  const order = new Rng(seed, 'order').shuffle(asks.map((_, i) => i))
  const byUrl = new Map<string, number[]>()
  for (const [i, url] of asks.entries()) byUrl.set(url, [...(byUrl.get(url) ?? []), i])
  const next = new Map<string, number>()
  return order.map(i => {
    const url = asks[i] as string
    const k = next.get(url) ?? 0
    next.set(url, k + 1)
    return (byUrl.get(url) as number[])[k] as number
  })
}

t.test('CHAOS_REPLAY=request: each request\'s trouble follows the seed, the request and its askings before, whatever order requests come in', async t => {
  // 20 pages, each asked three times (a retry, a reload), arriving in five different orders.
  const asks = Array.from({ length: 60 }, (_, i) => `${EXPLORE_PAGE}?limit=5&offset=${(i % 20) * 5}`)
  const settings: Partial<Config> = { chaosSeed: 7, failRate: 0.3, fault: 'truncate', faultRate: 0.2, delayMs: { kind: 'uniform', min: 0, max: 400 } }
  const runs = [1, 2, 3, 4, 5].map(seed => troubleByAsking(troubles(settings), asks, shuffledAskings(asks, seed)))
  for (const run of runs.slice(1)) t.same(run, runs[0], 'the same trouble for each request\'s each asking')
  const statuses = [...(runs[0] as Map<string, string>).values()].map(text => JSON.parse(text)[2] ?? 200)
  t.ok(statuses.includes(503) && statuses.includes(200), `pages and failures both drawn: ${statuses.join(' ')}`)
  const firsts = [...(runs[0] as Map<string, string>)].filter(([key]) => key.endsWith('#0')).map(([, drawn]) => drawn)
  const thirds = [...(runs[0] as Map<string, string>)].filter(([key]) => key.endsWith('#2')).map(([, drawn]) => drawn)
  t.not(firsts.join(), thirds.join(), 'a request asked again draws anew: a retry may succeed')
  const otherSeed = troubleByAsking(troubles({ ...settings, chaosSeed: 8 }), asks, shuffledAskings(asks, 1))
  t.not([...otherSeed.values()].join(), [...(runs[0] as Map<string, string>).values()].join(), 'another seed, other trouble')
  // The order the same pages arrive in decides everything by order: the replay a browser's parallel loads break.
  const byOrder = [1, 2].map(seed => troubleByAsking(troubles({ ...settings, chaosReplay: 'order' }), asks, shuffledAskings(asks, seed)))
  t.not(JSON.stringify([...(byOrder[1] as Map<string, string>)].sort()), JSON.stringify([...(byOrder[0] as Map<string, string>)].sort()), 'by order, another arrival order gives pages other trouble')
})

t.test('by request, a request is its method, its target as sent and, under CHAOS only, its Prefer header', async t => {
  const draws = (settings: Partial<Config>, asks: Array<[string, Record<string, string>, string]>): Array<number | undefined> => {
    const trouble = troubles({ failRate: 0.5, chaosSeed: 1, ...settings })
    return asks.map(([url, headers, method]) => {
      trouble.draw(pageRequest(url, headers, settings.chaos === true), url, method)
      return trouble.lastDraw
    })
  }
  t.same(draws({}, [[PAGE, {}, 'GET'], [PAGE, {}, 'HEAD'], [`${PAGE}&limit=1`, {}, 'GET'], [PAGE, {}, 'GET'], [PAGE, { Prefer: 'x=1' }, 'GET']]),
    [0, 0, 0, 1, 2], 'HEAD and another query are other requests; without CHAOS, Prefer is no part of one')
  t.same(draws({ chaos: true }, [[PAGE, {}, 'GET'], [PAGE, { Prefer: 'delay=1' }, 'GET'], [PAGE, { Prefer: 'delay=1' }, 'GET'], [`${PAGE}&__delay=1`, {}, 'GET']]),
    [0, 0, 1, 0], 'under CHAOS, each Prefer and each steering field makes a request of its own')
  // A 5,000 requests of their own still fail at the rate asked: the digests spread the draws.
  const trouble = troubles({ failRate: 0.2, chaosSeed: 5 })
  const failed = Array.from({ length: 5000 }, (_, i) => trouble.draw(...sentPage(`${PAGE}&offset=${i}`))?.failure !== undefined).filter(Boolean).length
  t.ok(failed > 900 && failed < 1100, `${failed} of 5,000 distinct requests failed`)
})

t.test('restart: every request\'s askings from zero, the order\'s sequence from its first draw', async t => {
  for (const chaosReplay of ['request', 'order'] as const) {
    const trouble = troubles({ failRate: 0.5, chaosSeed: 4, chaosReplay })
    const first = failures(trouble, 30)
    t.not(failures(trouble, 30).join(), first.join(), `${chaosReplay}: going on draws anew`)
    trouble.restart()
    t.same(failures(trouble, 30), first, `${chaosReplay}: after restart, the same as the first run`)
  }
})

t.test('the askings are counted in a table of fixed size: past 16,384 distinct requests they start again from zero', async t => {
  const counts = new ReplayCounts()
  const bytes = counts.buffer.byteLength
  const digest = new RequestDigest()
  t.equal(counts.next(digest.of('GET', '/a', '')), 0)
  t.equal(counts.next(digest.of('GET', '/a', '')), 1)
  t.equal(counts.next(digest.of('GET', '/b', '')), 0)
  let restarted = 0
  let most = 0
  for (let i = 0; i < 100_000; i++) {
    counts.next(digest.of('GET', `/page?offset=${i}`, ''))
    most = Math.max(most, counts.held)
    if (counts.held === 1) restarted++
  }
  t.ok(most <= REPLAY_KEYS, `at most ${most} requests held, of ${REPLAY_KEYS}`)
  t.ok(restarted >= 5, `started over ${restarted} times in 100,000 distinct requests`)
  t.equal(counts.buffer.byteLength, bytes, `the same ${bytes} bytes throughout`)
  counts.clear()
  t.equal(counts.next(digest.of('GET', '/a', '')), 0, 'cleared: the first asking again')
})

t.test('serving threads share one table: across threads, each asking of a request gets a draw number of its own', async t => {
  const counts = new ReplayCounts()
  const keys = 200
  const rounds = 50
  const threads = await Promise.all([0, 1, 2].map(async () => await new Promise<number[][]>((resolve, reject) => {
    const worker = new Worker(new URL('../fixtures/replay-askings-thread.ts', import.meta.url), { workerData: { buffer: counts.buffer, keys, rounds } })
    worker.once('message', resolve)
    worker.once('error', reject)
  })))
  for (let key = 0; key < keys; key++) {
    const draws = threads.flatMap(got => got[key] as number[]).sort((a, b) => a - b)
    if (draws.some((draw, i) => draw !== i)) t.fail(`key ${key}: draws ${draws.join(' ')} are not 0 to ${3 * rounds - 1}, each once`)
  }
  t.equal(counts.held, keys, `${keys} requests held, one slot each`)
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
