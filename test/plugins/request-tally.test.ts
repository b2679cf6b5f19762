import t from 'tap'
import { Histogram, Registry, type Metric } from 'prom-client'
import { RequestTally } from '../../src/plugins/request-tally.js'

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
