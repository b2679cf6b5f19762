// Requests, durations, dropped log lines and simulated trouble, counted where pages are answered: the one process, or
// each serving thread (asked when scraped, serving/thread-metrics.ts).
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge, type Metric, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client'
import { EXPLORE_ROUTE } from '../explore/explore-path.js'
import { RequestTally, type RequestSeries } from './request-tally.js'

/** Counts every answer of `app` (Fastify's and the fast path's) into `registry`, but those of route `except`. */
export function countRequests (app: FastifyInstance, registry: Registry, except: string | null = null): void {
  // Counted in plain numbers, read when scraped (ADR 003).
  const tally = new RequestTally([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
  // prom-client's registry reads a metric through `get()`, which is all these have of its classes.
  registry.registerMetric(tally.counter(
    'explore_http_requests_total',
    'HTTP requests answered, by route template, method and status.'
  ) as unknown as Metric)
  registry.registerMetric(tally.histogram(
    'explore_http_request_duration_seconds',
    'Time to answer, by route template, method and status.'
  ) as unknown as Metric)
  const logs = app.logDestination
  if (logs !== null) {
    scrapedCounter(
      registry,
      'explore_log_lines_dropped_total',
      'Log lines dropped because the reader of standard output did not keep up (a full log buffer).',
      () => logs.dropped
    )
  }
  // Simulated trouble (a demo server): what was injected.
  const trouble = app.trouble
  if (trouble !== null) {
    const { counts } = trouble
    scrapedCounter(registry, 'explore_chaos_delays_total',
      'Page requests delayed on purpose (DELAY_MS, or delay= under CHAOS).', () => counts.delays)
    scrapedCounter(registry, 'explore_chaos_delay_seconds_total',
      'Seconds of delay injected on purpose, summed.', () => counts.delayMs / 1000)
    scrapedCounter(registry, 'explore_chaos_faults_total',
      'Connections broken on purpose (FAULT), by kind: reset, truncate, dribble.',
      () => Object.entries(counts.faults), 'kind')
    scrapedCounter(registry, 'explore_chaos_failures_total',
      'Page requests answered with a failure on purpose (FAIL_RATE, or status= under CHAOS), by status.',
      () => counts.failures, 'status')
  }

  // Few series (route templates × methods × statuses): raw URLs never become labels.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.routeOptions.url === except) {
      done()
      return
    }
    tally.record(
      tally.series(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode),
      reply.elapsedTime / 1000
    )
    done()
  })
  // Fast-path answers (ADR 002) never reach Fastify; their four usual series are found once, any other looked up.

  const [get200, get304, head200, head304] = [['GET', 200], ['GET', 304], ['HEAD', 200], ['HEAD', 304]]
    .map(([method, status]) => tally.series(EXPLORE_ROUTE, method as string, status as number))
  app.fastPath?.onAnswer(({ method, statusCode, responseTime }) => {
    const series = statusCode !== 200 && statusCode !== 304
      ? tally.series(EXPLORE_ROUTE, method, statusCode)
      : method === 'GET' ? (statusCode === 200 ? get200 : get304) : (statusCode === 200 ? head200 : head304)
    tally.record(series as RequestSeries, responseTime / 1000)
  })
}

/**
 * A metric read from plain figures when scraped: one value, or one per value of `label`; a gauge's null leaves it
 * as it was. A counter is a gauge that only grows: the same reset and put.
 */
export function scrapedMetric (
  kind: 'counter' | 'gauge', registry: Registry, name: string, help: string,
  read: () => number | null | Iterable<readonly [string | number, number]>, label = ''
): void {
  const options = {
    name,
    help,
    labelNames: label === '' ? [] : [label],
    registers: [registry],
    collect (this: Counter | Gauge) {
      const value = read()
      if (value === null) return
      this.reset()
      const put = (labels: Record<string, string>, n: number): void => {
        if (kind === 'gauge') (this as Gauge).set(labels, n)
        else (this as Counter).inc(labels, n)
      }
      if (typeof value === 'number') put({}, value)
      else for (const [at, n] of value) put({ [label]: String(at) }, n)
    }
  }
  if (kind === 'counter') new Counter(options) // eslint-disable-line no-new
  else new Gauge(options) // eslint-disable-line no-new
}

export const scrapedCounter = (
  registry: Registry, name: string, help: string, read: () => number | Iterable<readonly [string | number, number]>, label = ''
): void => { scrapedMetric('counter', registry, name, help, read, label) }

/** Series labels a request histogram writes apart (request-tally.ts), put with the others for aggregation. */
export function withSharedLabels (
  metrics: MetricObjectWithValues<MetricValue<string>>[]
): MetricObjectWithValues<MetricValue<string>>[] {
  return metrics.map(metric => ({
    ...metric,
    values: metric.values.map(value => {
      const { sharedLabels, ...rest } = value as MetricValue<string> & { sharedLabels?: Record<string, string> }
      return sharedLabels === undefined ? rest : { ...rest, labels: { ...rest.labels, ...sharedLabels } }
    })
  }))
}
