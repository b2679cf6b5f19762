// buildApp(config): wires the public app, the snapshot, the operator's pages and the serving threads (ADR 029).
import type { FastifyInstance } from 'fastify'
import { changesDirOf, type Config } from './config.js'
import consolePlugin from './console/console-route.js'
import { servingCachesBytes } from './explore/page-cache.js'
import { publicApp } from './http/public-app.js'
import { warnOfCuts } from './http/http-server.js'
import { journalReserve } from './http/request-journal.js'
import docsPlugin from './plugins/docs.js'
import metricsPlugin from './plugins/metrics.js'
import opsListenerPlugin from './plugins/ops-listener.js'
import opsPagesAccess from './plugins/ops-pages-access.js'
import snapshotPlugin from './plugins/snapshot.js'
import { healthRoutes } from './routes/health-routes.js'
import { opsActionsRoutes } from './routes/ops-actions-route.js'
import { requestsRoutes } from './routes/requests-route.js'
import { statusRoute, troubleStatus } from './routes/status-route.js'
import { memoryGuard, type MemoryGuard } from './snapshot/memory-budget.js'
import { ServingPool } from './serving/serving-pool.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when this thread answers the public port itself. */
    servingPool: ServingPool | null
  }
}

export interface AppOptions {
  /** 0: this thread answers the public port (serving-mode.ts). */
  servingThreads?: number
  memory?: MemoryGuard
}

export async function buildApp (
  config: Config, { servingThreads = 0, memory }: AppOptions = {}
): Promise<FastifyInstance> {
  // Read once per request.
  const app: FastifyInstance = await publicApp(config, () => app.snapshots.current(), async app => {
    const pool = servingThreads > 0
      ? new ServingPool(config, servingThreads, {
        log: app.log.child({ component: 'serving' }),
        forward: async request => await app.inject(request),
        chaosSeed: app.trouble?.seed ?? null,
        askings: app.trouble?.askings.buffer ?? null
      })
      : null
    app.decorate('servingPool', pool)
    if (app.trouble !== null) {
      // CHAOS_SEED=<seed> replays this run's sequence.
      app.log.warn(
        { trouble: troubleStatus(app.trouble) },
        'simulated trouble is on: this is a demo server, not a replica'
      )
    }
    // What each serving thread's caches may fill, kept aside by the memory budget (ADR 037), and its journal (ADR 041).
    const cachesBytes = Math.max(1, servingThreads) * servingCachesBytes(config.pageCacheMb * 1024 * 1024)
    await app.register(snapshotPlugin, {
      snapshotPath: config.snapshotPath,
      // A version a serving thread still holds is memory on its way out (ADR 034).
      memory: memory ?? memoryGuard(
        config, () => pool?.lettingGo() === true, cachesBytes + journalReserve(config, servingThreads)
      ),
      changesDir: changesDirOf(config),
      watch: config.watch,
      reloadDebounceMs: config.reloadDebounceMs,
      remote: config.snapshotUrl === null
        ? null
        : {
            url: config.snapshotUrl,
            pollSeconds: config.snapshotPollSeconds,
            cacheDir: config.snapshotCacheDir,
            maxBytes: config.snapshotMaxMb * 1024 * 1024,
            forcePathStyle: config.s3ForcePathStyle,
            headers: config.snapshotHttpHeaders
          },
      versions: { stateDir: config.stateDir, keep: config.keepVersions, pruneDays: config.statePruneDays },
      // Counts as served once every serving thread serves it (10 s at most).
      publish: pool === null ? null : async model => { await pool.publish(model) }
    })
    if (pool !== null) {
      // They hold the public connections: drained before anything else closes.
      app.addHook('preClose', async () => { await pool.close() })
    }
    if (config.opsPort === null) {
      app.decorate('ops', null)
    } else {
      await app.register(opsListenerPlugin, {
        port: config.opsPort,
        host: config.opsHost,
        requestTimeoutMs: config.requestTimeoutMs,
        limits: { maxConnections: config.maxConnections, onCut: warnOfCuts(app.log) }
      })
    }
    await app.register(opsPagesAccess, config)
    if (config.docs) await app.register(docsPlugin)
    if (config.console) await app.register(consolePlugin)
    if (config.metrics) await app.register(metricsPlugin)
    await app.register(statusRoute)
    await app.register(opsActionsRoutes, { token: config.opsToken })
    await app.register(healthRoutes)
    await app.register(requestsRoutes)
  })
  return app
}
