// The HTTP server Fastify runs on (its `serverFactory`): Fastify's own settings, a bound on connections and on the
// answers one connection may leave unread (ADR 046), then the fast path (ADR 002) or Fastify's handler.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastPath } from './fast-path.js'

/** Answers one connection may have waiting to be sent; a client pipelining more without reading is cut off. */
export const MOST_PENDING_ANSWERS = 16

/** What Fastify hands a server factory: its own options, of which the HTTP server's are used here. */
interface FactoryOptions {
  http?: ServerOptions
  keepAliveTimeout?: number
  requestTimeout?: number
  connectionTimeout?: number
  maxRequestsPerSocket?: number
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void
type ServerFactory = (handler: Handler, options: FactoryOptions) => Server

export interface ConnectionLimits {
  /** Per server (each serving thread has one); further connections are closed as they come. */
  maxConnections: number
  /** Told of each connection closed by a limit; may be set once the server is made. */
  onCut?: (why: Cut) => void
}

type Cut = 'maxConnections' | 'unreadAnswers'

const received = Symbol('requests received')
const number = Symbol('request number')

interface CountedSocket extends Socket {
  [received]?: number
  _httpMessage?: NumberedResponse | null
}

interface NumberedResponse extends ServerResponse {
  [number]?: number
}

export function httpServerFactory (fastPath: FastPath | null, limits: ConnectionLimits): ServerFactory {
  const cut = (why: Cut): void => { limits.onCut?.(why) }
  return (handler, options) => {
    const server = createServer(options.http ?? {}, (request, response: NumberedResponse) => {
      const socket = request.socket as CountedSocket
      // The rest of a chunk of pipelined requests, parsed after a cut.
      if (socket.destroyed) return
      const n = (socket[received] ?? 0) + 1
      socket[received] = n
      response[number] = n
      // Node sends answers in order: the one on the socket is the oldest unsent, and Node reads on while the
      // answers of a chunk of requests are made. Counted without a listener per answer (drain-on-close.ts).
      const sending = socket._httpMessage?.[number] ?? n
      if (n - sending >= MOST_PENDING_ANSWERS) {
        socket.destroy()
        cut('unreadAnswers')
        return
      }
      if (fastPath?.answer(request, response) !== true) handler(request, response)
    })
    server.maxConnections = limits.maxConnections
    server.on('drop', () => { cut('maxConnections') })
    // What Fastify does to the server it makes itself (lib/server.js, getServerInstance).
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout)
    if (options.maxRequestsPerSocket !== undefined && options.maxRequestsPerSocket > 0) {
      server.maxRequestsPerSocket = options.maxRequestsPerSocket
    }
    return server
  }
}

/** A warning a minute at most, counting what was cut since the last: an attacker does not write the log. */
export function warnOfCuts (log: { warn: (fields: object, message: string) => void }): (why: Cut) => void {
  let warned = -Infinity
  let since = { maxConnections: 0, unreadAnswers: 0 }
  return why => {
    since[why]++
    const now = Date.now()
    if (now - warned < 60_000) return
    warned = now
    log.warn({ closed: since }, 'connections closed: MAX_CONNECTIONS reached, or a client left over 16 answers unread')
    since = { maxConnections: 0, unreadAnswers: 0 }
  }
}
