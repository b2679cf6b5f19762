// buildApp(config): the whole service as one Fastify instance. It only wires: the server's options, the
// snapshot, CORS, the explore view and the operational routes, one not-found and one error handler, and
// the fast path when it is on. serve.ts listens; tests call this directly.
import cluster from 'node:cluster'
import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { changesDirOf, type Config } from './config.js'
import { notFoundHandler } from './explore/append-slash.js'
import { exploreRoutes, exploreView } from './explore/explore-route.js'
import type { PageSettings } from './explore/page-answer.js'
import type { PageRequestSettings } from './explore/page-request.js'
import { SimulatedTrouble, troubleWanted } from './explore/simulated-trouble.js'
import { corsPreflightStrategy } from './http/cors-preflight.js'
import { drainOnClose } from './http/drain-on-close.js'
import { errorHandler } from './http/error-handler.js'
import { ignoreExpectations } from './http/expectations.js'
import { FastPath } from './http/fast-path.js'
import { checkRequest } from './http/request-checks.js'
import { nextRequestId } from './http/request-id.js'
import { logRequest } from './http/request-log.js'
import { serverOptions } from './http/server-options.js'
import consolePlugin from './console/console-route.js'
import docsPlugin from './plugins/docs.js'
import metricsPlugin from './plugins/metrics.js'
import snapshotPlugin from './plugins/snapshot.js'
import clusterPlugin from './plugins/cluster.js'
import opsListenerPlugin, { OPS_PREFIX } from './plugins/ops-listener.js'
import { healthRoutes } from './routes/health-routes.js'
import { opsActionsRoutes } from './routes/ops-actions-route.js'
import { statusRoute, troubleStatus } from './routes/status-route.js'
import type { SnapshotModel } from './snapshot/model/snapshot-model.js'
import { memoryGuard } from './cluster/memory-order.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Answers GET and HEAD of pages before Fastify routes them; null when FAST_PATH is off. */
    fastPath: FastPath | null
    /** The demo server's simulated trouble (DELAY_MS, FAIL_RATE, FAULT, CHAOS); null when none is asked for. */
    trouble: SimulatedTrouble | null
  }
  interface FastifyRequest {
    /** The Host (or trusted X-Forwarded-Host) Django's check accepted, for absolute links. */
    linkHost: string
  }
}

export async function buildApp (config: Config): Promise<FastifyInstance> {
  const settings: PageSettings & PageRequestSettings = {
    maxLimit: config.maxLimit,
    publicBaseUrl: config.publicBaseUrl,
    trustProxy: config.trustProxy,
    allowedHosts: config.allowedHosts,
    maxUrlLength: config.maxUrlLength,
    cacheMaxAge: config.cacheMaxAge,
    cors: config.corsOrigin,
    pageCacheBytes: config.pageCacheMb * 1024 * 1024,
    chaos: config.chaos
  }
  const troubles = troubleWanted(config) ? new SimulatedTrouble({ ...config, ...settings }) : null
  // The served snapshot, read once per request; none while the first load is under way. The plugin below
  // sets `app.snapshots`.
  const snapshot = (): SnapshotModel | null => app.snapshots.current()
  const fastPath = config.fastPath ? new FastPath(snapshot, settings, troubles) : undefined
  const app = Fastify(serverOptions(config, fastPath)).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('fastPath', fastPath ?? null)
  app.decorate('trouble', troubles)
  if (troubles !== null) {
    // Said once at the start, seed included: CHAOS_SEED=<seed> replays this run's sequence.
    app.log.warn({ trouble: troubleStatus(troubles) }, 'simulated trouble is on: this is a demo server, not a replica')
    // Shutdown waits for requests in flight, not for the delays simulated on them.
    app.addHook('preClose', async () => { troubles.hurry() })
  }
  app.decorateRequest('linkHost', '')
  drainOnClose(app.server)
  ignoreExpectations(app.server)

  // No endpoint reads a request body. Parsing one could only produce errors the original never gives
  // (a POST with a broken JSON body still gets its 405), so every body is left unread.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null))

  // Django checks every request's Host, then the target's length, before anything else. ALLOWED_HOSTS names
  // the public names: the operator's port is reached by address (probes, Prometheus), so it is not held to it.
  const opsSettings = { ...settings, allowedHosts: null }
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      request.linkHost = checkRequest(request.raw, app.ops?.carried(request.raw) === true ? opsSettings : settings)
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  })

  const explore = exploreView(snapshot, settings, troubles)
  // Set before any route plugin loads: a plugin keeps the handlers that exist when it is registered.
  app.setNotFoundHandler(notFoundHandler(explore))
  app.setErrorHandler(errorHandler)
  app.addConstraintStrategy(corsPreflightStrategy)
  if (config.corsOrigin !== false) {
    // The operator's pages carry no CORS headers: with them, a script on any site an operator visits could
    // read /-/status (file paths, refused files' contents) from a browser that reaches the service.
    app.addHook('onRoute', route => {
      if (route.url.startsWith(OPS_PREFIX)) route.config = { ...route.config, cors: false }
    })
    // Preflights only on the routes that ask for them (the explore path's preflight route).
    await app.register(cors, { origin: config.corsOrigin, preflight: false })
  }
  await app.register(snapshotPlugin, {
    snapshotPath: config.snapshotPath,
    memory: memoryGuard(config),
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
          headers: config.snapshotHttpHeaders,
          // A cluster's primary follows the source once; its workers load what it tells them to.
          follow: !cluster.isWorker
        },
    versions: { stateDir: config.stateDir, keep: config.keepVersions }
  })
  await app.register(clusterPlugin)
  if (config.opsPort === null) app.decorate('ops', null)
  else await app.register(opsListenerPlugin, { port: config.opsPort, host: config.opsHost, requestTimeoutMs: config.requestTimeoutMs })
  if (config.docs) await app.register(docsPlugin)
  if (config.console) await app.register(consolePlugin)
  if (config.metrics) await app.register(metricsPlugin)
  await app.register(exploreRoutes, { explore })
  await app.register(statusRoute)
  await app.register(opsActionsRoutes, { token: config.opsToken })
  await app.register(healthRoutes)

  if (fastPath !== undefined) {
    if (config.requestLog) {
      // The line Fastify's answers get, with the next request id where Fastify's child logger puts it.
      fastPath.onAnswer(answered => logRequest(app.log, answered, nextRequestId()))
    }
    app.addHook('onReady', async () => { fastPath.open = true })
    // From the first moment of closing, Fastify answers everything (its 503s while it closes included).
    app.addHook('preClose', async () => { fastPath.open = false })
  }
  return app
}
