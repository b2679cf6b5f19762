// Fastify's options, the same for the server and for tests.
import { STATUS_CODES, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyHttpOptions, FastifyServerOptions } from 'fastify'
import fastJson from 'fast-json-stringify'
import type { Config } from '../config.js'
import { badRequest, headersTooLarge, notFound, requestTimeout, type HttpError } from '../errors.js'
import { parseRequestQuery } from '../explore/query-string.js'
import { forSerializer } from '../schemas/serializer-schema.js'
import { sendError } from './error-handler.js'
import type { FastPath } from './fast-path.js'
import { httpServerFactory, type ConnectionLimits } from './http-server.js'
import type { LogDestination } from './log-destination.js'
import { OneLineRequestLog } from './request-log.js'
import { nextRequestId } from './request-id.js'

/** `logTo` null: pino's own choice (nothing logged, or pino-pretty). */
export function serverOptions (
  config: Config, fastPath: FastPath | null = null, logTo: LogDestination | null = null,
  limits: ConnectionLimits = { maxConnections: config.maxConnections }
): FastifyHttpOptions<Server> {
  return {
    serverFactory: httpServerFactory(fastPath, limits),
    genReqId: nextRequestId,
    logger: {
      level: config.logLevel,
      // For a person at a terminal only: it runs in a worker thread.
      ...(config.logPretty
        ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
        : {}),
      ...(logTo === null ? {} : { stream: logTo })
    },
    logController: new OneLineRequestLog({ disableRequestLogging: !config.requestLog }),
    trustProxy: config.trustProxy,
    // Without Host, Django uses the server's own name: request-checks.ts does too, not Node's bare 400. Node checks
    // request timeouts every 30 s by default: a 2 s REQUEST_TIMEOUT_MS answered 408 at 30 s.
    http: {
      maxHeaderSize: 16 * 1024,
      requireHostHeader: false,
      connectionsCheckingInterval: checkEvery(config.requestTimeoutMs)
    },
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs * 6,
    // Paths Fastify cannot decode or take as a parameter are unknown to the original's URLconf too: 404.
    frameworkErrors: (error, _request, reply) => {
      const refusal = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? notFound()
        : badRequest()
      sendError(reply, refusal)
    },
    clientErrorHandler: refuseOnSocket,
    // Schemas in the form fast-json-stringify writes without running a validator (ADR 018).
    schemaController: { compilersFactory: { buildSerializer: serializerFactory } },
    routerOptions: {
      // Django's QueryDict semantics; too many fields parse to a marker answered with Django's 400.
      querystringParser: parseRequestQuery
    }
  }
}

/** A request is answered 408 within a second of its timeout, or a quarter of a short one. */
function checkEvery (timeoutMs: number): number {
  return Math.max(25, Math.min(1000, Math.round(timeoutMs / 4)))
}

type ParserSocket = Duplex & { _httpMessage?: { _headerSent?: boolean } | null }

/** What a parser's error is answered with on the socket; null when the socket is only closed. */
export function socketRefusal (error: NodeJS.ErrnoException, socket: ParserSocket): HttpError | null {
  // As Node's socketOnError: no refusal once an answer has begun, or the client would read two.
  if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?._headerSent === true) return null
  return error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? requestTimeout()
    : error.code === 'HPE_HEADER_OVERFLOW' ? headersTooLarge() : badRequest()
}

/** Errors Node's parser raises before Fastify sees a request, answered in the service's JSON on the socket. */
export function refuseOnSocket (error: NodeJS.ErrnoException, socket: ParserSocket): void {
  const refusal = socketRefusal(error, socket)
  if (refusal === null) {
    socket.destroy()
    return
  }
  const body = JSON.stringify(refusal.body)
  // No body for a HEAD, even one Node could not parse past its request line.
  const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD '
  socket.end(
    `HTTP/1.1 ${refusal.statusCode} ${STATUS_CODES[refusal.statusCode] as string}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${head ? '' : body}`
  )
}

type SerializerFactory =
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']

/** As Fastify's default, but a route's own `$id` left out of the shared schemas. */
export const serializerFactory: NonNullable<SerializerFactory> = (externalSchemas, serializerOpts) => {
  const shared = Object.entries((externalSchemas ?? {}) as Record<string, object>)
  return ({ schema }) => {
    const own = (schema as { $id?: string }).$id
    const others = shared.filter(([id]) => id !== own).map(([id, each]) => [id, forSerializer(each)])
    return fastJson(forSerializer(schema as object), { ...serializerOpts, schema: Object.fromEntries(others) })
  }
}
