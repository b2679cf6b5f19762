// GET /-/metrics in Prometheus text format: requests, the served snapshot, its reloads and the memory budget.
// Each app has its own registry, so tests can build several.
import fp from 'fastify-plugin'
import { parsePool } from '../snapshot/load/parse-pool.js'
import { AggregatorRegistry, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { pinStatus } from '../routes/status-route.js'
import { countRequests, scrapedCounter, scrapedMetric, withSharedLabels } from './request-metrics.js'
import { VERSION } from '../version.js'

export default fp(async function metricsPlugin (app) {
  const registry = new Registry()
  const gauge = (name: string, help: string, read: () => number | null | Iterable<readonly [string, number]>, label = ''): void => {
    scrapedMetric('gauge', registry, name, help, read, label)
  }
  collectDefaultMetrics({ register: registry, prefix: 'explore_' })
  new Gauge({
    name: 'explore_build_info',
    help: 'Always 1: the explore-replica version and the Node.js version this process runs, as labels.',
    labelNames: ['version', 'node'] as const,
    registers: [registry]
  }).set({ version: VERSION, node: process.version }, 1)
  countRequests(app, registry)
  // Snapshot figures are read when Prometheus scrapes, from whatever model is served then.
  gauge('explore_snapshot_items', 'Items in the served snapshot, by language.',
    () => Object.entries(app.snapshots.current()?.itemCounts() ?? {}), 'language')
  gauge(
    'explore_snapshot_item_bytes',
    'Bytes of the served snapshot\'s rendered items. They are shared memory, which explore_nodejs_external_memory_bytes does not count.',
    () => app.snapshots.current()?.memory.bytes ?? null
  )
  gauge(
    'explore_snapshot_age_seconds',
    'Seconds since the served snapshot was generated (its generated_at), or loaded if it has none.',
    () => {
      const info = app.snapshots.current()?.info
      if (info === undefined) return null
      return (Date.now() - (info.generatedAt === null ? info.loadedAt.getTime() : Date.parse(info.generatedAt))) / 1000
    }
  )
  gauge(
    'explore_snapshot_image_read_seconds',
    'Seconds the served snapshot took to read from its version image; absent when it was parsed.',
    () => {
      const ms = app.snapshots.current()?.info.fromImage?.ms
      return ms === undefined ? null : ms / 1000
    }
  )
  gauge('explore_snapshot_loaded_timestamp_seconds', 'When the served snapshot was loaded (Unix time).', () => {
    const model = app.snapshots.current()
    return model === null ? null : model.info.loadedAt.getTime() / 1000
  })
  scrapedCounter(
    registry,
    'explore_snapshot_source_checks_total',
    'Checks of the published snapshot source (SNAPSHOT_URL), by outcome: ok (unchanged or new) or error.',
    () => {
      const status = app.snapshotSource.status()
      return status === null ? [] : [['ok', status.checks - status.errors], ['error', status.errors]]
    },
    'outcome'
  )
  scrapedCounter(registry, 'explore_snapshot_reloads_total', 'Snapshot reloads since start, by outcome.', () => {
    const { succeeded, failed } = app.snapshots.status()
    return [['success', succeeded], ['failure', failed]]
  }, 'outcome')
  scrapedCounter(
    registry,
    'explore_change_files_total',
    'Change files since start, by outcome: applied, or refused with a report.',
    () => Object.entries(app.snapshots.record.changeFiles()),
    'outcome'
  )
  scrapedCounter(
    registry,
    'explore_snapshot_images_total',
    'Version images since start, by outcome: read instead of a parse, written after one, or refused (and parsed).',
    () => Object.entries(app.snapshots.images?.status() ?? { read: 0, written: 0, refused: 0 }),
    'outcome'
  )
  gauge(
    'explore_snapshot_reload_failures_in_a_row',
    'Failed reloads since the last success: not 0 means the file on disk is not the one served.',
    () => app.snapshots.status().failedInARow
  )
  scrapedCounter(
    registry,
    'explore_snapshot_refusals_total',
    'Snapshot files refused by a reload, by reason: invalid (their contents, or unreadable) or too_big (the memory budget).',
    () => Object.entries(app.snapshots.record.refusals()),
    'reason'
  )
  gauge(
    'explore_memory_budget_bytes',
    'The memory budget snapshots are loaded within, for the whole process (MEMORY_LIMIT_MB, else the cgroup\'s limit, else the machine\'s memory).',
    () => app.snapshots.budget?.bytes ?? null
  )
  gauge(
    'explore_snapshot_refused_estimate_bytes',
    'The estimated peak memory of loading the last file refused as too big for the budget (absent until one is).',
    () => app.snapshots.record.lastTooBig()?.neededBytes ?? null
  )
  gauge(
    'explore_snapshot_pinned',
    'An operator\'s pin (POST /-/rollback or /-/pin): 1 with the pinned version as its label; no series while the source is followed.',
    () => {
      const { pin } = pinStatus(app)
      return pin === null ? [] : [[pin.version, 1]]
    },
    'version'
  )
  gauge(
    'explore_snapshot_newer_held_back',
    'While pinned: 1 when a newer file or published object was noticed and not loaded, else 0.',
    () => pinStatus(app).newest === null ? 0 : 1
  )
  gauge(
    'explore_parse_pool_threads',
    'Parse threads running for large snapshot loads (0 before the first large load, once idle ones have exited, or when they cannot start).',
    () => parsePool.status().threads
  )
  scrapedCounter(
    registry,
    'explore_parse_pool_fallbacks_total',
    'Large snapshot loads parsed on the main thread because the parse threads could not start.',
    () => parsePool.status().fallbacks
  )

  app.get('/-/metrics', { schema: { summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType)
    const threads = app.servingPool
    if (threads === null) return await registry.metrics()
    // Serving threads' request counts are summed into this thread's: one scrape, the whole service (ADR 029).
    const all = [await registry.getMetricsAsJSON(), ...await threads.metrics()].map(withSharedLabels)
    return await AggregatorRegistry.aggregate(all).metrics()
  })
}, { name: 'metrics', dependencies: ['snapshot'] })
