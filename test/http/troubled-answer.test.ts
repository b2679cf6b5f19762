// Simulated trouble over real sockets, seen by a real client, on both paths that answer pages (the fast
// path and the Fastify route): delays, failures, resets, cut and dribbled bodies, a request's own wishes
// under CHAOS only, the page cache never serving trouble to a plain request, and delays that cost timers.
import t from 'tap'
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import { buildTestApp, EXPLORE, smallSnapshot } from '../helpers.js'

interface Exchange {
  status: number | null
  headers: IncomingHttpHeaders
  body: string
  /** The body as it arrived: one entry per piece the client read. */
  pieces: number
  /** The client's error, if the exchange broke. */
  error: NodeJS.ErrnoException | null
  /** Milliseconds from the request sent to the exchange over. */
  elapsed: number
}

/** One exchange on its own connection (or the agent's), however it ends: an answer, a cut body, a reset. Host: localhost, so that every app's links are the same. */
async function exchange (app: FastifyInstance, path: string, headers: Record<string, string> = {}, agent?: Agent): Promise<Exchange> {
  const { port } = app.server.address() as { port: number }
  const started = performance.now()
  return new Promise(resolve => {
    const result: Exchange = { status: null, headers: {}, body: '', pieces: 0, error: null, elapsed: 0 }
    const done = (): void => { result.elapsed = performance.now() - started; resolve(result) }
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'localhost', connection: agent === undefined ? 'close' : 'keep-alive', ...headers }, agent: agent ?? false }, res => {
      result.status = res.statusCode ?? null
      result.headers = res.headers
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => { chunks.push(chunk); result.pieces++ })
      res.on('error', error => { result.error = error })
      res.on('close', () => { result.body = Buffer.concat(chunks).toString('utf8'); done() })
    })
    req.on('error', error => { result.error = error; done() })
    req.end()
  })
}

async function serving (t: Parameters<typeof buildTestApp>[0], overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildTestApp(t, smallSnapshot(), overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

const PATHS: Array<[string, Partial<Config>]> = [['the fast path', { fastPath: true }], ['the Fastify route', { fastPath: false }]]
const PAGE = `${EXPLORE}?companies=8&limit=12`

t.test('a delayed answer arrives no earlier than its delay, and is the page a plain replica sends', async t => {
  const plain = await serving(t)
  const expected = await exchange(plain, PAGE)
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, delayMs: { kind: 'uniform', min: 250, max: 300 }, chaosSeed: 1 })
    const got = await exchange(app, PAGE)
    // Node's timers start from the loop's cached clock, in whole ms: never more than 1 ms early.
    t.ok(got.elapsed >= 249, `${label}: ${got.elapsed.toFixed(1)} ms, not before the 250 ms minimum`)
    t.equal(got.status, 200)
    t.equal(got.body, expected.body, `${label}: the same page`)
    t.same({ ...got.headers, date: null }, { ...expected.headers, date: null }, `${label}: the same headers`)
    t.equal(app.trouble?.counts.delays, 1)
  }
})

t.test('FAIL_RATE=0.2 over 1,000 real requests: 20% ± 2% fail, the same sequence on either path', async t => {
  const sequences: number[][] = []
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, failRate: 0.2, chaosSeed: 2026 })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.teardown(() => agent.destroy())
    const statuses: number[] = []
    const failures = new Set<string>()
    for (let i = 0; i < 1000; i++) {
      const got = await exchange(app, `${EXPLORE}?companies=7&limit=2&offset=${i % 5}`, {}, agent)
      statuses.push(got.status as number)
      if (got.status === 503) failures.add(got.body)
    }
    t.same([...failures], ['{"detail":"Service temporarily unavailable, try again later."}'], `${label}: DRF's body, every time`)
    const share = statuses.filter(status => status === 503).length / statuses.length
    t.ok(share >= 0.18 && share <= 0.22, `${label}: ${(share * 100).toFixed(1)}% failed`)
    t.same(new Set(statuses), new Set([200, 503]), `${label}: pages and failures, nothing else`)
    sequences.push(statuses)
  }
  t.same(sequences[1], sequences[0], 'the same seed, the same sequence, whichever path answers')
})

t.test('faults as a real client sees them, on either path', async t => {
  const plain = await serving(t)
  const expected = await exchange(plain, PAGE)
  const length = Number(expected.headers['content-length'])
  t.ok(length > 4 * 512, `the page is ${length} bytes: several dribbled pieces`)
  for (const [label, path] of PATHS) {
    const reset = await serving(t, { ...path, fault: 'reset' })
    const cut = await serving(t, { ...path, fault: 'truncate' })
    const dribble = await serving(t, { ...path, fault: 'dribble' })

    const broken = await exchange(reset, PAGE)
    t.equal(broken.status, null, `${label}, reset: no answer`)
    t.equal(broken.error?.code, 'ECONNRESET', `${label}, reset: ${broken.error?.message}`)

    const short = await exchange(cut, PAGE)
    t.equal(short.status, 200, `${label}, truncate: the headers`)
    t.equal(short.headers['content-length'], String(length))
    t.equal(Buffer.byteLength(short.body), Math.floor(length / 2), `${label}, truncate: half the body, then the connection closed`)
    t.ok(short.error !== null, `${label}, truncate: the client knows it was cut (${short.error?.message})`)
    t.equal(short.body, expected.body.slice(0, short.body.length))

    const slow = await exchange(dribble, PAGE)
    t.equal(slow.body, expected.body, `${label}, dribble: the whole body in the end`)
    t.equal(slow.error, null)
    t.ok(slow.pieces >= 2, `${label}, dribble: ${slow.pieces} pieces read`)

    // A HEAD has no body to cut: it goes out whole, and its connection is closed after it.
    const head = await new Promise<number>((resolve, reject) => {
      const { port } = cut.server.address() as { port: number }
      httpRequest({ host: '127.0.0.1', port, path: PAGE, method: 'HEAD', agent: false }, res => { res.resume(); resolve(res.statusCode as number) }).on('error', reject).end()
    })
    t.equal(head, 200, `${label}, truncate of a HEAD: its headers`)
    t.same([reset.trouble?.counts.faults, cut.trouble?.counts.faults, dribble.trouble?.counts.faults], [
      { reset: 1, truncate: 0, dribble: 0 }, { reset: 0, truncate: 2, dribble: 0 }, { reset: 0, truncate: 0, dribble: 1 }
    ], `${label}: each fault counted`)
  }
})

t.test('a view\'s own error is delayed like a page, and goes out whole whatever the fault', async t => {
  const plain = await serving(t)
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, delayMs: { kind: 'fixed', ms: 150 }, fault: 'truncate' })
    for (const url of ['/de/api/internal/explore/', `${EXPLORE}?companies=x`]) {
      const expected = await exchange(plain, url)
      const got = await exchange(app, url)
      t.ok(got.elapsed >= 149, `${label}, ${url}: ${got.elapsed.toFixed(1)} ms, not before its delay`)
      t.equal(got.status, expected.status, `${label}, ${url}: ${expected.status}`)
      t.equal(got.body, expected.body, 'the error\'s whole body, from the error handler')
      t.same({ ...got.headers, date: null }, { ...expected.headers, date: null })
    }
    t.same(app.trouble?.counts.faults, { reset: 0, truncate: 0, dribble: 0 }, `${label}: no fault counted on an error`)
    t.equal(app.trouble?.counts.delays, 2)
  }
})

t.test('without CHAOS a request\'s wishes are ordinary parameters and headers, ignored as before', async t => {
  const plain = await serving(t)
  for (const [label, path] of PATHS) {
    // Trouble on (a 1 ms delay), CHAOS off: the wishes change nothing but the delay's count.
    const app = await serving(t, { ...path, delayMs: { kind: 'fixed', ms: 1 } })
    const asks: Array<[string, Record<string, string>]> = [
      [`${EXPLORE}?companies=8&limit=2&__delay=60000&__status=503`, {}],
      [`${EXPLORE}?companies=8&limit=2`, { Prefer: 'delay=60000, status=503' }],
      [`${EXPLORE}?companies=8&limit=2&__code=429`, { Prefer: 'code=500' }]
    ]
    for (const [url, headers] of asks) {
      const expected = await exchange(plain, url, headers)
      const got = await exchange(app, url, headers)
      t.equal(got.status, 200, `${label}: ${url} ${JSON.stringify(headers)}`)
      t.equal(got.body, expected.body, 'the page a plain replica sends, its links keeping the parameters')
      t.same({ ...got.headers, date: null }, { ...expected.headers, date: null })
    }
    t.match(JSON.parse((await exchange(app, asks[0]![0])).body), { next: /\?__delay=60000&__status=503&companies=8&limit=2&offset=2$/ })
    t.equal(app.trouble?.counts.delayMs, 4, 'every delay the configured 1 ms, none the 60 s asked')
    t.equal(app.trouble?.counts.failures.size, 0)
  }
})

t.test('under CHAOS a request asks for its own trouble; its page and the cache never carry it', async t => {
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, chaos: true })
    const url = `${EXPLORE}?companies=8&limit=2`
    const plain = await exchange(app, url)

    const failed = await exchange(app, `${url}&__status=503`)
    t.equal(failed.status, 503, label)
    t.equal(failed.body, '{"detail":"Service temporarily unavailable, try again later."}')
    t.equal(failed.headers['retry-after'], '1')
    t.equal(failed.headers['access-control-allow-origin'], '*', 'CORS\'s header: a browser app sees the status')
    const throttled = await exchange(app, url, { Prefer: 'status=429' })
    t.equal(throttled.status, 429)
    t.equal(throttled.body, '{"detail":"Request was throttled. Expected available in 1 second."}')
    t.equal((await exchange(app, url, { Prefer: 'code=404' })).status, 404, 'Prism\'s code=')

    // Asked again and again, a failure is never kept: the plain request still gets its page.
    for (let i = 0; i < 3; i++) t.equal((await exchange(app, `${url}&__status=500`)).status, 500)
    for (let i = 0; i < 3; i++) t.equal((await exchange(app, url)).body, plain.body, `${label}: the plain page, answer ${i + 1}`)

    // A delayed page is the plain page: links without the steering field, the same ETag.
    const delayed = await exchange(app, `${url}&__delay=120`)
    t.ok(delayed.elapsed >= 119, `${label}: asked 120 ms, waited ${delayed.elapsed.toFixed(1)}`)
    t.equal(delayed.body, plain.body, 'next and previous without __delay')
    t.equal(delayed.headers.etag, plain.headers.etag)
    t.match(JSON.parse(plain.body), { next: `http://localhost${url}&offset=2` })
    const slow = await exchange(app, url, { Prefer: 'delay=80' })
    t.ok(slow.elapsed >= 79, `Prefer: delay=80, waited ${slow.elapsed.toFixed(1)}`)
    t.equal(app.trouble?.counts.delays, 2)
    t.same([...app.trouble!.counts.failures], [[503, 1], [429, 1], [404, 1], [500, 3]])
    // A page kept for a request that asked for a delay is the page a plain request gets, and the other way round.
    for (let i = 0; i < 3; i++) t.equal((await exchange(app, `${EXPLORE}?companies=7&__delay=1`)).body, (await exchange(app, `${EXPLORE}?companies=7`)).body)
  }
})

t.test('metrics count what was injected; the console and /-/status say trouble is on', async t => {
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, chaos: true, delayMs: { kind: 'fixed', ms: 5 }, fault: 'dribble', faultRate: 0.5, chaosSeed: 11 })
    for (let i = 0; i < 4; i++) await exchange(app, `${EXPLORE}?companies=7&limit=1`)
    await exchange(app, `${EXPLORE}?companies=7&__status=503&__delay=0`)
    const metrics = (await exchange(app, '/-/metrics')).body
    const dribbled = app.trouble?.counts.faults.dribble as number
    t.ok(dribbled > 0 && dribbled < 5, `${label}: ${dribbled} of 5 dribbled`)
    t.match(metrics, '\nexplore_chaos_delays_total 4\n')
    t.match(metrics, '\nexplore_chaos_delay_seconds_total 0.02\n')
    t.match(metrics, `\nexplore_chaos_faults_total{kind="dribble"} ${dribbled}\n`)
    t.match(metrics, '\nexplore_chaos_faults_total{kind="reset"} 0\n')
    t.match(metrics, '\nexplore_chaos_failures_total{status="503"} 1\n')
    t.match(metrics, '\nexplore_http_requests_total{route="/:lang/api/internal/explore/",method="GET",status="503"} 1\n', `${label}: the failure counted as an answer`)
    const status = JSON.parse((await exchange(app, '/-/status')).body)
    t.same(status.trouble, { delay: '5', failRate: 0, failStatus: 503, fault: 'dribble', faultRate: 0.5, chaos: true, seed: 11, replay: 'request' })
    const console = (await exchange(app, '/-/')).body
    t.match(console, '<p class="banner warn" id="trouble" role="alert"><strong>Simulated trouble is on: this is a demo server.</strong>')
    t.match(console, 'every page waits 5 ms; on 50% of pages, bodies trickle out in small pieces; each request may ask for its own delay and status')
    t.match(console, '<code>CHAOS_SEED=11</code>')
  }
  const plain = await serving(t)
  t.equal(plain.trouble, null, 'nothing asked: no trouble built')
  t.equal(JSON.parse((await exchange(plain, '/-/status')).body).trouble, null)
  t.notMatch((await exchange(plain, '/-/')).body, 'id="trouble"')
  t.notMatch((await exchange(plain, '/-/metrics')).body, 'explore_chaos_')
})

// Ten minutes' delay, a test of a few seconds: it fails by its timeout if closing left the waits in place.
t.test('closing the app ends the simulated waits at once: shutdown waits for requests, not for delays', { timeout: 30_000 }, async t => {
  for (const [label, path] of PATHS) {
    const app = await serving(t, { ...path, delayMs: { kind: 'fixed', ms: 600_000 } })
    const waiting = exchange(app, PAGE)
    await new Promise(resolve => app.server.once('request', resolve))
    await app.close()
    const got = await waiting
    t.equal(got.status, 200, `${label}: answered when the app closed, not ten minutes later`)
  }
})

t.test('1,000 requests waiting on a delay hold no core: the loop sleeps while they wait', async t => {
  // Long enough that all N arrive well inside it, on a machine busy with other test files too (the window
  // measured runs from the last arrival to the first answer).
  const DELAY = 6000
  const N = 1000
  const app = await buildTestApp(t, smallSnapshot(), { delayMs: { kind: 'fixed', ms: DELAY } })
  // A backlog for all of them at once: with Node's 511, the kernel drops the rest's SYNs for a second.
  await app.listen({ port: 0, host: '127.0.0.1', backlog: N })
  let arrived = 0
  const allWaiting = new Promise<void>(resolve => app.server.on('request', () => { if (++arrived === N) resolve() }))
  let firstAnswer: () => void = () => {}
  const answered = new Promise<void>(resolve => { firstAnswer = resolve })
  const { port } = app.server.address() as { port: number }
  const statuses: Promise<number>[] = Array.from({ length: N }, () => new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path: `${EXPLORE}?limit=1`, agent: false }, res => {
      firstAnswer()
      res.resume()
      res.on('end', () => resolve(res.statusCode as number))
    }).on('error', reject).end()
  }))
  await allWaiting
  // From the moment all 1,000 wait to the first answer: what the process spends meanwhile.
  const elu = performance.eventLoopUtilization()
  const cpu = process.cpuUsage()
  const started = performance.now()
  await answered
  const wall = performance.now() - started
  const { utilization } = performance.eventLoopUtilization(elu)
  const used = process.cpuUsage(cpu)
  const cpuShare = (used.user + used.system) / 1000 / wall
  t.ok(wall > 300, `a window of ${wall.toFixed(0)} ms with all ${N} waiting`)
  t.ok(utilization < 0.3, `event loop busy ${(utilization * 100).toFixed(1)}% of the window`)
  t.ok(cpuShare < 0.3, `CPU ${(cpuShare * 100).toFixed(1)}% of one core over the window`)
  t.equal(app.trouble?.counts.delays, N)
  t.same(new Set(await Promise.all(statuses)), new Set([200]), `all ${N} answered`)
})
