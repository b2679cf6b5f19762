// Requests, their durations, dropped log lines and simulated trouble, counted wherever pages are answered: by
// the one process, or by each serving thread (the control thread asks them when scraped, serving/thread-metrics.ts).
import type { FastifyInstance } from 'fastify'
import { Counter, type Metric, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client'
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
    new Counter({ // eslint-disable-line no-new
      name: 'explore_log_lines_dropped_total',
      help: 'Log lines dropped because the reader of standard output did not keep up (a full log buffer).',
      registers: [registry],
      collect () { this.reset(); this.inc(logs.dropped) }
    })
  }
  // Simulated trouble (a demo server): what was injected, read from its plain counts when scraped.
  const trouble = app.trouble
  if (trouble !== null) {
    new Counter({ // eslint-disable-line no-new
      name: 'explore_chaos_delays_total',
      help: 'Page requests delayed on purpose (DELAY_MS, or delay= under CHAOS).',
      registers: [registry],
      collect () { this.reset(); this.inc(trouble.counts.delays) }
    })
    new Counter({ // eslint-disable-line no-new
      name: 'explore_chaos_delay_seconds_total',
      help: 'Seconds of delay injected on purpose, summed.',
      registers: [registry],
      collect () { this.reset(); this.inc(trouble.counts.delayMs / 1000) }
    })
    new Counter({ // eslint-disable-line no-new
      name: 'explore_chaos_faults_total',
      help: 'Connections broken on purpose (FAULT), by kind: reset, truncate, dribble.',
      labelNames: ['kind'] as const,
      registers: [registry],
      collect () {
        this.reset()
        for (const [kind, count] of Object.entries(trouble.counts.faults)) this.inc({ kind }, count)
      }
    })
    new Counter({ // eslint-disable-line no-new
      name: 'explore_chaos_failures_total',
      help: 'Page requests answered with a failure on purpose (FAIL_RATE, or status= under CHAOS), by status.',
      labelNames: ['status'] as const,
      registers: [registry],
      collect () {
        this.reset()
        for (const [status, count] of trouble.counts.failures) this.inc({ status: String(status) }, count)
      }
    })
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
  // Fast-path answers (ADR 002) never reach Fastify: counted under their route. Its GET and HEAD 200s and 304s
  // have their four series found once; any other status (a demo server's simulated failure) is looked up.
  const [get200, get304, head200, head304] = [['GET', 200], ['GET', 304], ['HEAD', 200], ['HEAD', 304]]
    .map(([method, status]) => tally.series(EXPLORE_ROUTE, method as string, status as number))
  app.fastPath?.onAnswer(({ method, statusCode, responseTime }) => {
    const series = statusCode !== 200 && statusCode !== 304
      ? tally.series(EXPLORE_ROUTE, method, statusCode)
      : method === 'GET' ? (statusCode === 200 ? get200 : get304) : (statusCode === 200 ? head200 : head304)
    tally.record(series as RequestSeries, responseTime / 1000)
  })
}

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
