// The public port's Fastify instance, alike for the one process (app.ts) and each serving thread (serving-app.ts).
import { METHODS } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config.js'
import { notFoundHandler } from '../explore/append-slash.js'
import { exploreRoutes, exploreView, type ExploreHandler } from '../explore/explore-route.js'
import type { PageSettings } from '../explore/page-answer.js'
import type { PageRequestSettings } from '../explore/page-request.js'
import { SimulatedTrouble, troubleWanted } from '../explore/simulated-trouble.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { unionCache, unionCacheBytes } from '../snapshot/model/union-cache.js'
import { corsPreflightStrategy } from './cors-preflight.js'
import { drainOnClose } from './drain-on-close.js'
import { errorHandler } from './error-handler.js'
import { ignoreExpectations } from './expectations.js'
import { FastPath } from './fast-path.js'
import { warnOfCuts, type ConnectionLimits } from './http-server.js'
import { JournalHooks } from './journal-hooks.js'
import { LogDestination } from './log-destination.js'
import { RequestJournal } from './request-journal.js'
import { answerWriter } from './troubled-answer.js'
import { checkRequest } from './request-checks.js'
import { nextRequestId } from './request-id.js'
import { logRequest } from './request-log.js'
import { serverOptions } from './server-options.js'

export const OPS_PREFIX = '/-/'

declare module 'fastify' {
  interface FastifyInstance {
    fastPath: FastPath | null
    trouble: SimulatedTrouble | null
    /** This thread's (REQUEST_JOURNAL); null when off. */
    requestJournal: RequestJournal | null
    /** Null when pino chose (silent, or pretty). */
    logDestination: LogDestination | null
    /** Whether a request came in on OPS_PORT. */
    carriedByOps: (request: import('node:http').IncomingMessage) => boolean
  }
  interface FastifyRequest {
    /** The Host (or trusted X-Forwarded-Host) Django's check accepted. */
    linkHost: string
  }
}

/** What a serving thread shares with the control (ADR 029): its place, the trouble's table of askings. */
export interface ThreadShare {
  thread: number
  askings: SharedArrayBuffer | null
}

/** `snapshot`: null while the first load runs; `register`: plugins added before the explore routes. */
export async function publicApp (
  config: Config, snapshot: () => SnapshotModel | null, register: (app: FastifyInstance) => Promise<void>,
  share: ThreadShare | null = null
): Promise<FastifyInstance> {
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
  // The thread's union cache, sized with its page cache (ADR 037).
  unionCache.resize(unionCacheBytes(settings.pageCacheBytes))
  const troubles = troubleWanted(config)
    ? new SimulatedTrouble({ ...config, ...settings }, share?.askings ?? undefined)
    : null
  // The operator's own requests (OPS_PORT) are not journaled: read once the ops listener has said which they are.
  const journal = config.requestJournal
    ? new JournalHooks(new RequestJournal(config.requestJournalSize, share?.thread ?? null), snapshot,
      request => app.carriedByOps(request))
    : null
  const write = answerWriter(troubles, journal)
  const fastPath = config.fastPath ? new FastPath(snapshot, settings, write) : undefined
  const logTo = config.logLevel === 'silent' || config.logPretty ? null : new LogDestination()
  const limits: ConnectionLimits = { maxConnections: config.maxConnections }
  const app = Fastify(serverOptions(config, fastPath ?? null, logTo, limits)).withTypeProvider<TypeBoxTypeProvider>()
  limits.onCut = warnOfCuts(app.log)
  app.decorate('fastPath', fastPath ?? null)
  app.decorate('logDestination', logTo)
  if (logTo !== null) {
    logTo.onResumed = dropped => { app.log.warn({ dropped }, 'log lines dropped: the log\'s reader did not keep up') }
  }
  app.decorate('trouble', troubles)
  app.decorate('requestJournal', journal?.journal ?? null)
  app.decorate('carriedByOps', () => false)
  if (troubles !== null) {
    // Shutdown does not wait for simulated delays.
    app.addHook('preClose', async () => { troubles.hurry() })
  }
  app.decorateRequest('linkHost', '')
  drainOnClose(app.server)
  ignoreExpectations(app.server)

  // No endpoint reads a body: parsing one could only add errors the original never gives. Nor is one looked at:
  // Fastify refused a QUERY without Content-Type (400) and a malformed Content-Type (415) before any route, where
  // DRF answers the method (405). POST keeps its body for the operator's actions.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null))
  for (const method of METHODS) {
    if (method !== 'POST' && method !== 'CONNECT') app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  }

  // The operator's port is reached by address (probes, Prometheus): not ALLOWED_HOSTS but its own rule
  // (ops-pages-access.ts); and no proxy is in front of it to forward a host.
  const opsSettings = { ...settings, allowedHosts: null, trustProxy: false }
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      request.linkHost = checkRequest(request.raw, app.carriedByOps(request.raw) ? opsSettings : settings)
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  })

  journal?.listen(app, OPS_PREFIX)
  const journaled = journal?.routeWriter(write) ?? write
  const publicView = exploreView(snapshot, settings, journaled)
  const opsView = exploreView(snapshot, opsSettings, journaled)
  const explore: ExploreHandler = (request, reply) => {
    (app.carriedByOps(request.raw) ? opsView : publicView)(request, reply)
  }
  // Set before any route plugin loads: a plugin keeps the handlers that exist when it is registered.
  app.setNotFoundHandler(notFoundHandler(explore))
  app.setErrorHandler(errorHandler)
  app.addConstraintStrategy(corsPreflightStrategy)
  if (config.corsOrigin !== false) {
    // No CORS on operator pages: any site an operator visits could read /-/status through their browser.
    app.addHook('onRoute', route => {
      if (route.url.startsWith(OPS_PREFIX)) route.config = { ...route.config, cors: false }
    })
    // Preflights only on routes that ask (explore-route.ts).
    await app.register(cors, { origin: config.corsOrigin, preflight: false })
  }
  await register(app)
  await app.register(exploreRoutes, { explore })

  if (fastPath !== undefined) {
    if (config.requestLog) {
      // The same line as Fastify's answers, with a request id.
      fastPath.onAnswer(answered => logRequest(app.log, answered, nextRequestId()))
    }
    fastPath.onFault = error => { app.log.error({ err: error }, 'unhandled error') }
    app.addHook('onReady', async () => { fastPath.open = true })
    // Once closing, Fastify answers everything (its 503s included).
    app.addHook('preClose', async () => { fastPath.open = false })
  }
  return app
}
