// GET /-/metrics (src/plugins/metrics.ts) and the tally its request metrics are counted in.
import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Histogram, Registry, type Metric } from 'prom-client'
import { RequestTally } from '../../src/plugins/request-tally.js'
import { buildTestApp, EXPLORE, smallSnapshot, reloadFile } from '../helpers.js'

// src/plugins/metrics.ts: requests by route template, the build, the snapshot and its reloads; none with METRICS=false.
const metric = (body: string, name: string): string[] => body.split('\n').filter(line => line.startsWith(name))

t.test('Prometheus metrics: requests and latency by route template and status', async t => {
  const app = await buildTestApp(t)
  await app.inject(`${EXPLORE}?companies=7`)
  await app.inject(`${EXPLORE}?companies=8&limit=2`)
  await app.inject(`${EXPLORE}?companies=x`)
  await app.inject('/nowhere')
  const res = await app.inject('/-/metrics')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  t.ok(metric(res.body, 'explore_http_requests_total{route="/:lang/api/internal/explore/",method="GET",status="200"} 2').length === 1, 'raw URLs never become labels')
  t.ok(metric(res.body, 'explore_http_requests_total{route="/:lang/api/internal/explore/",method="GET",status="400"} 1').length === 1)
  t.ok(metric(res.body, 'explore_http_requests_total{route="unmatched",method="GET",status="404"} 1').length === 1)
  t.ok(metric(res.body, 'explore_http_request_duration_seconds_count{route="/:lang/api/internal/explore/",method="GET",status="200"} 2').length === 1)
  t.ok(metric(res.body, 'explore_process_cpu_seconds_total').length > 0, 'process metrics too')
})

t.test('explore_build_info: 1, labelled with the package\'s version and Node\'s', async t => {
  const app = await buildTestApp(t)
  const { version } = JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
  const body = (await app.inject('/-/metrics')).body
  t.same(metric(body, 'explore_build_info'), [`explore_build_info{version="${version}",node="${process.version}"} 1`])
  t.match(body, '# TYPE explore_build_info gauge\n')
})

t.test('snapshot metrics: items, age, reloads', async t => {
  const app = await buildTestApp(t)
  await writeFile(app.snapshots.file, 'not json')
  await reloadFile(app)
  await writeFile(app.snapshots.file, JSON.stringify(smallSnapshot()))
  await reloadFile(app)
  const body = (await app.inject('/-/metrics')).body
  t.same(metric(body, 'explore_snapshot_items{'), ['explore_snapshot_items{language="en"} 25', 'explore_snapshot_items{language="es"} 2', 'explore_snapshot_items{language="fr"} 0'])
  t.same(metric(body, 'explore_snapshot_reloads_total{'), ['explore_snapshot_reloads_total{outcome="success"} 1', 'explore_snapshot_reloads_total{outcome="failure"} 1'])
  t.same(metric(body, 'explore_snapshot_reload_failures_in_a_row '), ['explore_snapshot_reload_failures_in_a_row 0'])
  const age = Number(metric(body, 'explore_snapshot_age_seconds ')[0]?.split(' ')[1])
  t.ok(age > 0, `age ${age}s since generated_at`)
  // The 27 items' served bytes, each followed by its comma, at least.
  const itemBytes = Number(metric(body, 'explore_snapshot_item_bytes ')[0]?.split(' ')[1])
  const rendered = app.snapshots.current()!.language('en')!.page(null, 0, 25).items.byteLength
  t.ok(itemBytes > rendered, `${itemBytes} item bytes, more than the 25 en items' ${rendered}`)
  t.equal(itemBytes, app.snapshots.current()!.memory.bytes)
})

t.test('METRICS=false: no endpoint', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { metrics: false })
  t.equal((await app.inject('/-/metrics')).statusCode, 404)
})

// src/plugins/request-tally.ts: requests in plain numbers, written as prom-client's counter and histogram would write them.
const bounds = [0.001, 0.01, 0.1]

t.test('the tally writes what prom-client\'s own counter and histogram write for the same requests', async t => {
  const tally = new RequestTally(bounds)
  const ours = new Registry()
  ours.registerMetric(tally.counter('x_requests_total', 'Requests.') as unknown as Metric)
  ours.registerMetric(tally.histogram('x_duration_seconds', 'Time.') as unknown as Metric)
  const theirs = new Registry()
  const histogram = new Histogram({ name: 'x_duration_seconds', help: 'Time.', labelNames: ['route', 'method', 'status'], buckets: bounds, registers: [theirs] })

  const requests: Array<[string, string, number, number]> = [
    ['/a', 'GET', 200, 0.001], // on a bound: counted in that bucket, as prom-client does
    ['/a', 'GET', 200, 0.0005],
    ['/a', 'GET', 200, 2], // past every bound: +Inf only
    ['/a', 'HEAD', 200, 0.05],
    ['unmatched', 'GET', 404, 0.01]
  ]
  for (const [route, method, status, seconds] of requests) {
    tally.record(tally.series(route, method, status), seconds)
    histogram.observe({ route, method, status: String(status) }, seconds)
  }
  tally.series('/never', 'GET', 200) // made ahead, never used: not shown
  const text = await ours.metrics()
  const histogramText = text.slice(text.indexOf('# HELP x_duration_seconds'))
  t.equal(histogramText, await theirs.metrics())
  t.equal(text.slice(0, text.indexOf('\n\n')), [
    '# HELP x_requests_total Requests.',
    '# TYPE x_requests_total counter',
    'x_requests_total{route="/a",method="GET",status="200"} 3',
    'x_requests_total{route="/a",method="HEAD",status="200"} 1',
    'x_requests_total{route="unmatched",method="GET",status="404"} 1'
  ].join('\n'))
})
