// buildApp(config): the whole service as one Fastify instance: CORS, the snapshot, the explore route,
// one not-found handler and one error handler. server.ts listens; tests call this directly.
import { STATUS_CODES } from 'node:http'
import type { IncomingMessage, Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance, type FastifyReply } from 'fastify'
import cors from '@fastify/cors'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import { invalidHost, isHttpError, notFound, uriTooLong, type ErrorBody } from './errors.js'
import { CacheFront, nextRequestId } from './explore/cache-front.js'
import { notModified } from './explore/conditional-get.js'
import { headersOf, pageCacheOf } from './explore/page-cache.js'
import { exploreAnswer, exploreRoute, frontPage } from './explore/explore-route.js'
import { LANGUAGE } from './schemas/snapshot.js'
import { parseRequestQuery } from './explore/query-string.js'
import { renderJson } from './explore/render-page.js'
import { requestHost } from './explore/request-origin.js'
import docsPlugin from './docs.js'
import { drainOnClose } from './drain-on-close.js'
import { healthRoutes } from './health-routes.js'
import metricsPlugin from './metrics.js'
import snapshotPlugin from './plugins/snapshot.js'
import { OneLineRequestLog } from './request-log.js'
import { statusRoute } from './status-route.js'

/**
 * Fastify's own options, the same for the server and for tests. With a front, the HTTP server answers
 * plain page requests itself before handing a request to Fastify.
 */
export function serverOptions (config: Config, front?: CacheFront): FastifyHttpOptions<Server> {
  return {
    ...(front === undefined ? {} : { serverFactory: front.serverFactory }),
    genReqId: nextRequestId,
    logger: {
      level: config.logLevel,
      // pino-pretty runs in a worker thread, and only for a person at a terminal.
      ...(config.logPretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {})
    },
    logController: new OneLineRequestLog({ disableRequestLogging: !config.requestLog }),
    trustProxy: config.trustProxy,
    // Limits for clients that are slow or send too much: 16 KiB of request line and headers (Node's
    // default, stated), the whole request within requestTimeoutMs, idle sockets closed after 6× that.
    http: { maxHeaderSize: 16 * 1024 },
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs * 6,
    // A path Fastify cannot percent-decode, or with a segment too long to be a parameter, is one the
    // original's URLconf does not know either.
    frameworkErrors: (error, _request, reply) => {
      if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        const missing = notFound()
        sendJson(reply, missing.statusCode, missing.body)
      } else {
        sendJson(reply, 400, { detail: 'Bad Request.' })
      }
    },
    // Errors Node's HTTP parser raises before Fastify sees a request (a raw non-ASCII byte in the
    // target, oversized headers, a slow client): answered in the service's JSON, then the socket closes.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
      if (error.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy()
        return
      }
      const [status, body] = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', '{"detail":"Request Timeout."}']
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? ['431 Request Header Fields Too Large', '{"detail":"Request Header Fields Too Large."}']
          : ['400 Bad Request', '{"detail":"Bad Request."}']
      // A HEAD answer has no body, even one Node could not parse past its request line.
      const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD '
      socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${head ? '' : body}`)
    },
    routerOptions: {
      // Django's QueryDict semantics: every value kept, repeated keys in order, `+` as space. A query
      // with too many fields is not parsed at all (the route answers it with a 400).
      querystringParser: parseRequestQuery
    }
  }
}

/** DRF's error bodies with its bare `application/json` (Fastify would append a charset to a string). */
function sendJson (reply: FastifyReply, status: number, body: ErrorBody, indent: number | null = null): void {
  reply.code(status).header('content-type', 'application/json').send(renderJson(body, indent))
}

/** A header's part of a page cache key: absent and empty apart, and nothing one value could forge. */
function headerKey (value: string | string[] | undefined): string {
  return value === undefined ? '\n-' : `\n=${String(value)}`
}

/**
 * The page cache key of a GET or HEAD: everything the bytes of its answer depend on besides the
 * snapshot (the cache is per snapshot). An absent header and an empty one are different requests (an
 * empty Accept is a 406).
 */
function pageKey (request: IncomingMessage, host: string, config: Config, corsVaries: boolean): string {
  const { accept, origin } = request.headers
  const proto = request.headers['x-forwarded-proto']
  return `${request.url as string}\n${host}\n${headerKey(accept)}${config.trustProxy ? headerKey(proto) : ''}${corsVaries ? headerKey(origin) : ''}`
}

// The explore path after percent-decoding (Django matches decoded paths: `explore%2F` is `explore/`),
// and without its slash, which Django's APPEND_SLASH redirects.
const EXPLORE_DECODED = /^\/([^/]+)\/api\/internal\/explore(\/?)$/

function decodePath (path: string): string | null {
  try {
    return decodeURIComponent(path)
  } catch {
    return null
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Answers plain page requests before Fastify (cached or built); null when the page cache is off. */
    cacheFront: CacheFront | null
  }
}

export async function buildApp (config: Config): Promise<FastifyInstance> {
  const pageCacheBytes = config.pageCacheMb * 1024 * 1024
  const front = pageCacheBytes > 0 ? new CacheFront() : undefined
  const app = Fastify(serverOptions(config, front)).withTypeProvider<TypeBoxTypeProvider>()
  app.decorateRequest('jsonIndent', null)
  app.decorate('cacheFront', front ?? null)
  drainOnClose(app.server)

  // No endpoint reads a request body. Parsing one could only produce errors the original never gives
  // (a POST with a broken JSON body still gets its 405), so every body is left unread.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null))

  app.decorateRequest('linkHost', '')
  app.decorateRequest('pageKey', null)
  // Answers that depend on the requesting Origin (CORS limited to listed origins) are cached per Origin.
  const corsVaries = Array.isArray(config.corsOrigin)

  // The first hook, so that a cached answer costs as little as a static file. Django checks the Host
  // header before anything else (a malformed or not allowed one would poison absolute links), then the
  // length of the target, which the original's proxy would have limited; then the page cache.
  app.addHook('onRequest', (request, reply, done) => {
    const host = requestHost(request.raw, config)
    if (host === null) return done(invalidHost())
    if (request.url.length > config.maxUrlLength) return done(uriTooLong())
    request.linkHost = host
    if (pageCacheBytes > 0 && (request.method === 'GET' || request.method === 'HEAD')) {
      // Over HTTP the cache front has answered plain hits already; what reaches here is a miss, a
      // conditional request, or an injected one.
      const key = pageKey(request.raw, host, config, corsVaries)
      request.pageKey = key
      const page = pageCacheOf(app.snapshots.current(), pageCacheBytes).get(key)
      if (page !== undefined) {
        const headers = headersOf(page.headerList)
        if (notModified(request.headers['if-none-match'], page.etag)) reply.code(304).headers(headers).removeHeader('content-type').send()
        else reply.headers(headers).send(page.body)
        return
      }
    }
    done()
  })

  const viewOptions = {
    snapshot: () => app.snapshots.current(),
    maxLimit: config.maxLimit,
    publicBaseUrl: config.publicBaseUrl,
    trustProxy: config.trustProxy,
    cacheMaxAge: config.cacheMaxAge,
    corsVaries,
    pageCacheBytes
  }
  const answer = exploreAnswer(viewOptions)

  // Set before any route plugin loads: a plugin keeps the handlers that exist when it is registered.
  app.setNotFoundHandler(async (request, reply) => {
    const mark = request.url.indexOf('?')
    const path = decodePath(mark < 0 ? request.url : request.url.slice(0, mark))
    const match = path === null ? null : EXPLORE_DECODED.exec(path)
    if (match !== null && LANGUAGE.test(match[1] as string)) {
      if (match[2] === '/') return answer(request, reply, match[1] as string)
      // Relative Location and an empty HTML body, as Django's CommonMiddleware sends them.
      const query = mark < 0 ? '' : request.url.slice(mark + 1)
      reply.code(301).header('location', `${path}/${query === '' ? '' : `?${query}`}`)
        .type('text/html; charset=utf-8').send('')
      return reply
    }
    const error = notFound()
    sendJson(reply, error.statusCode, error.body)
    return reply
  })

  app.setErrorHandler((error, request, reply) => {
    if (isHttpError(error)) {
      sendJson(reply, error.statusCode, error.body, request.jsonIndent)
      return
    }
    const status = (error as { statusCode?: number }).statusCode
    if (status !== undefined && status >= 400 && status < 500) {
      // Fastify's own refusals get their status text, never Fastify's message (it may echo internals).
      sendJson(reply, status, { detail: `${STATUS_CODES[status] ?? 'Bad Request'}.` })
      return
    }
    request.log.error({ err: error }, 'unhandled error')
    sendJson(reply, 500, { detail: 'A server error occurred.' })
  })

  // A real CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) is routed apart from
  // a plain OPTIONS, so @fastify/cors can answer the one with static options while the other reaches
  // DRF's metadata. (Deciding per request in a CORS delegator cost a third of an uncached answer.)
  app.addConstraintStrategy({
    name: 'corsPreflight',
    mustMatchWhenDerived: false,
    storage () {
      const handlers = new Map<string, unknown>()
      return { get: (value: string) => handlers.get(value) ?? null, set: (value: string, handler: unknown) => { handlers.set(value, handler) } }
    },
    deriveConstraint: (request: { method?: string, headers: Record<string, unknown> }) =>
      request.method === 'OPTIONS' && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined ? 'yes' : 'no'
  } as unknown as Parameters<typeof app.addConstraintStrategy>[0])
  if (config.corsOrigin !== false) {
    // Preflights only on the routes that ask for them (the explore path's preflight route).
    await app.register(cors, { origin: config.corsOrigin, preflight: false })
  }
  await app.register(snapshotPlugin, { snapshotPath: config.snapshotPath, watch: config.watch, reloadDebounceMs: config.reloadDebounceMs })
  if (config.docs) await app.register(docsPlugin)
  if (config.metrics) await app.register(metricsPlugin)
  await app.register(exploreRoute, { answer })
  await app.register(statusRoute)
  await app.register(healthRoutes)

  if (front !== undefined) {
    // Pages are built in the front only when CORS adds the same headers to every answer.
    const build = corsVaries
      ? null
      : frontPage({ ...viewOptions, corsAnyOrigin: config.corsOrigin === '*' })
    // The same checks as the first hook, in the same order; anything else is left to Fastify.
    front.setLookup(request => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
      if ((request.url as string).length > config.maxUrlLength || request.headers['if-none-match'] !== undefined) return undefined
      const host = requestHost(request, config)
      if (host === null) return undefined
      const key = pageKey(request, host, config, corsVaries)
      // The model is read once: the cached page and a built one come from the same snapshot.
      const model = app.snapshots.current()
      const cache = pageCacheOf(model, pageCacheBytes)
      return cache.get(key) ?? build?.(request, model, cache, host, key)
    })
    if (config.requestLog) {
      front.onAnswer(({ reqId, method, url, statusCode, responseTime }) => {
        // The line OneLineRequestLog writes, with the request id where Fastify's child logger puts it
        // (below `info`, pino's method is a no-op).
        app.log.info({ reqId, method, url, statusCode, responseTime }, 'request')
      })
    }
    app.addHook('onReady', async () => { front.open = true })
    // From the first moment of closing, Fastify answers everything (its 503s while it closes included).
    app.addHook('preClose', async () => { front.open = false })
  }

  return app
}
