// GET /-/metrics in Prometheus text format (prom-client): requests and latency by route and status,
// the snapshot's items and their bytes, its age and reloads. Each app has its own registry, so tests can
// build several.
import fp from 'fastify-plugin'
import { parsePool } from '../snapshot/load/parse-pool.js'
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client'
import { EXPLORE_ROUTE } from '../explore/explore-path.js'
import { pinStatus, sourceStatus } from '../routes/status-route.js'
import { RequestTally, type RequestSeries } from './request-tally.js'
import { VERSION } from '../version.js'

export default fp(async function metricsPlugin (app) {
  const registry = new Registry()
  /**
   * A counter of the store's own counts, one series per key of what `read` gives, read when scraped. Across
   * a cluster's workers, the max: each worker loads the same files and counts the same reloads, change files
   * and refusals, and a sum would count one event once a worker.
   */
  const countsBy = (name: string, help: string, label: string, read: () => Record<string, number>): void => {
    new Counter({ // eslint-disable-line no-new
      name,
      help,
      labelNames: [label],
      registers: [registry],
      aggregator: 'max',
      collect () {
        this.reset()
        for (const [value, count] of Object.entries(read())) this.inc({ [label]: value }, count)
      }
    })
  }
  collectDefaultMetrics({ register: registry, prefix: 'explore_' })
  new Gauge({
    name: 'explore_build_info',
    help: 'Always 1: the explore-replica version and the Node.js version this process runs, as labels.',
    labelNames: ['version', 'node'] as const,
    registers: [registry],
    // Every worker of a cluster runs the same build: one series, not one per worker summed to their number.
    aggregator: 'max'
  }).set({ version: VERSION, node: process.version }, 1)
  // Counted in plain numbers, read when scraped (request-tally.ts says why).
  const tally = new RequestTally([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
  // prom-client's registry reads a metric through `get()`, which is all these have of its classes.
  registry.registerMetric(tally.counter('explore_http_requests_total', 'HTTP requests answered, by route template, method and status.') as unknown as Metric)
  registry.registerMetric(tally.histogram('explore_http_request_duration_seconds', 'Time to answer, by route template, method and status.') as unknown as Metric)
  // Snapshot figures are read when Prometheus scrapes, from whatever model is served then.
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_items',
    help: 'Items in the served snapshot, by language.',
    labelNames: ['language'] as const,
    registers: [registry],
    // Across a cluster's workers (AggregatorRegistry), the largest: every worker holds the whole snapshot.
    aggregator: 'max',
    collect () {
      this.reset()
      for (const [language, count] of Object.entries(app.snapshots.current()?.itemCounts() ?? {})) this.set({ language }, count)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_item_bytes',
    help: 'Bytes of the served snapshot\'s rendered items. They are shared memory, which explore_nodejs_external_memory_bytes does not count.',
    registers: [registry],
    aggregator: 'max',
    collect () {
      const model = app.snapshots.current()
      if (model !== null) this.set(model.memory.bytes)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_age_seconds',
    help: 'Seconds since the served snapshot was generated (its generated_at), or loaded if it has none.',
    registers: [registry],
    aggregator: 'max',
    collect () {
      const model = app.snapshots.current()
      if (model === null) return
      const { generatedAt, loadedAt } = model.info
      const since = generatedAt === null ? loadedAt.getTime() : Date.parse(generatedAt)
      this.set((Date.now() - since) / 1000)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_loaded_timestamp_seconds',
    help: 'When the served snapshot was loaded (Unix time).',
    registers: [registry],
    aggregator: 'min',
    collect () {
      const model = app.snapshots.current()
      if (model !== null) this.set(model.info.loadedAt.getTime() / 1000)
    }
  })
  new Counter({ // eslint-disable-line no-new
    name: 'explore_snapshot_source_checks_total',
    help: 'Checks of the published snapshot source (SNAPSHOT_URL), by outcome: ok (unchanged or new) or error.',
    labelNames: ['outcome'] as const,
    registers: [registry],
    // In a cluster the primary checks, once for all, and every worker reports its figures: the max, not the sum.
    aggregator: 'max',
    collect () {
      const status = sourceStatus(app)
      this.reset()
      if (status === null) return
      this.inc({ outcome: 'ok' }, status.checks - status.errors)
      this.inc({ outcome: 'error' }, status.errors)
    }
  })
  countsBy('explore_snapshot_reloads_total', 'Snapshot reloads since start, by outcome.', 'outcome', () => {
    const { succeeded, failed } = app.snapshots.status()
    return { success: succeeded, failure: failed }
  })
  countsBy('explore_change_files_total', 'Change files since start, by outcome: applied, or refused with a report.', 'outcome', () => ({ ...app.snapshots.changeFiles() }))
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_reload_failures_in_a_row',
    help: 'Failed reloads since the last success: not 0 means the file on disk is not the one served.',
    registers: [registry],
    aggregator: 'max',
    collect () { this.set(app.snapshots.status().failedInARow) }
  })
  countsBy('explore_snapshot_refusals_total', 'Snapshot files refused by a reload, by reason: invalid (their contents, or unreadable) or too_big (the memory budget).', 'reason', () => app.snapshots.refusals())
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_memory_budget_bytes',
    help: 'The memory budget snapshots are loaded within, for every worker together (MEMORY_LIMIT_MB, else the cgroup\'s limit, else the machine\'s memory).',
    registers: [registry],
    aggregator: 'max',
    collect () {
      const { budget } = app.snapshots
      if (budget !== null) this.set(budget.bytes)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_refused_estimate_bytes',
    help: 'The estimated peak memory of loading the last file refused as too big for the budget (absent until one is).',
    registers: [registry],
    aggregator: 'max',
    collect () {
      const tooBig = app.snapshots.lastTooBig()
      if (tooBig !== null) this.set(tooBig.neededBytes)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_pinned',
    help: 'An operator\'s pin (POST /-/rollback or /-/pin): 1 with the pinned version as its label; no series while the source is followed.',
    labelNames: ['version'] as const,
    registers: [registry],
    // The primary holds the pin for every worker: the same series in each, taken once.
    aggregator: 'max',
    collect () {
      this.reset()
      const { pin } = pinStatus(app)
      if (pin !== null) this.set({ version: pin.version }, 1)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_snapshot_newer_held_back',
    help: 'While pinned: 1 when a newer file or published object was noticed and not loaded, else 0.',
    registers: [registry],
    aggregator: 'max',
    collect () { this.set(pinStatus(app).newest === null ? 0 : 1) }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_parse_pool_threads',
    help: 'Parse threads running for large snapshot loads (0 before the first large load, once idle ones have exited, or when they cannot start).',
    registers: [registry],
    collect () { this.set(parsePool.status().threads) }
  })
  new Counter({ // eslint-disable-line no-new
    name: 'explore_parse_pool_fallbacks_total',
    help: 'Large snapshot loads parsed on the main thread because the parse threads could not start.',
    registers: [registry],
    collect () {
      this.reset()
      this.inc(parsePool.status().fallbacks)
    }
  })

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
    tally.record(tally.series(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode), reply.elapsedTime / 1000)
    done()
  })
  // Pages the fast path answered never reach Fastify; they are counted under the route they came from.
  // It answers GET and HEAD with 200s and 304s: their four series are found once. A simulated failure's
  // status (a demo server's) is looked up.
  const [get200, get304, head200, head304] = [['GET', 200], ['GET', 304], ['HEAD', 200], ['HEAD', 304]]
    .map(([method, status]) => tally.series(EXPLORE_ROUTE, method as string, status as number))
  app.fastPath?.onAnswer(({ method, statusCode, responseTime }) => {
    const series = statusCode !== 200 && statusCode !== 304
      ? tally.series(EXPLORE_ROUTE, method, statusCode)
      : method === 'GET' ? (statusCode === 200 ? get200 : get304) : (statusCode === 200 ? head200 : head304)
    tally.record(series as RequestSeries, responseTime / 1000)
  })

  // In a cluster, every worker's registry is read by the primary's AggregatorRegistry, which combines them
  // by each metric's aggregator (summed, or the max where every worker counts the same thing); any
  // worker answers with the whole cluster's figures (its own alone, if the primary does not answer).
  if (app.cluster !== null) {
    AggregatorRegistry.setRegistries([registry])
    // prom-client answers the primary's requests only once an AggregatorRegistry exists in the worker too.
    new AggregatorRegistry() // eslint-disable-line no-new
  }

  app.get('/-/metrics', { schema: { summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType)
    return (await app.cluster?.clusterMetrics()) ?? await registry.metrics()
  })
}, { name: 'metrics', dependencies: ['snapshot', 'cluster'] })
