// The HTTP server Fastify runs on (its `serverFactory`): Fastify's own settings, a bound on connections and on the
// requests one connection may have waiting, answered one at a time (ADR 046), then the fast path (ADR 002) or
// Fastify's handler.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastPath } from './fast-path.js'

/** Requests one connection may have waiting for their answers (pipelined); a client that sends more is cut off. */
export const MOST_WAITING_REQUESTS = 16

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

type Cut = 'maxConnections' | 'waitingRequests'

const received = Symbol('requests received')
const number = Symbol('request number')
const lastWaiting = Symbol('the last request waiting')

interface CountedSocket extends Socket {
  [received]?: number
  [lastWaiting]?: NumberedResponse
  _httpMessage?: NumberedResponse | null
}

interface NumberedResponse extends ServerResponse {
  [number]?: number
}

export function httpServerFactory (fastPath: FastPath | null, limits: ConnectionLimits): ServerFactory {
  const cut = (why: Cut): void => { limits.onCut?.(why) }
  return (handler, options) => {
    const answer: Handler = (request, response) => {
      if (fastPath?.answer(request, response) !== true) handler(request, response)
    }
    const server = createServer(options.http ?? {}, (request, response: NumberedResponse) => {
      const socket = request.socket as CountedSocket
      // The rest of a chunk of pipelined requests, parsed after a cut.
      if (socket.destroyed) return
      const n = (socket[received] ?? 0) + 1
      socket[received] = n
      response[number] = n
      // Node sends answers in order, the oldest unsent on the socket; nothing before this one: answered now.
      const sending = socket._httpMessage
      if (sending == null || sending === response) {
        answer(request, response)
        return
      }
      if (n - (sending[number] ?? n) >= MOST_WAITING_REQUESTS) {
        socket.destroy()
        cut('waitingRequests')
        return
      }
      // Node reads on while the answers of a chunk of requests are made: each is made once the one before it has
      // gone to the kernel, so a connection holds one answer's bytes at a time (ADR 046).
      const last = socket[lastWaiting]
      const before = last === undefined || last.writableFinished ? sending : last
      socket[lastWaiting] = response
      before.once('finish', () => { answer(request, response) })
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

/**
 * A warning a minute at most (`everyMs`), counting what was cut since the last; cuts after one are told when the
 * minute ends: an attacker neither writes the log nor hides in it.
 */
export function warnOfCuts (
  log: { warn: (fields: object, message: string) => void }, everyMs = 60_000
): (why: Cut) => void {
  let since = { maxConnections: 0, waitingRequests: 0 }
  let warned = -Infinity
  let timer: NodeJS.Timeout | null = null
  const warn = (): void => {
    timer = null
    warned = Date.now()
    log.warn({ closed: since }, 'connections closed: MAX_CONNECTIONS reached, or over 16 requests waiting on one')
    since = { maxConnections: 0, waitingRequests: 0 }
  }
  return why => {
    since[why]++
    if (timer !== null) return
    const wait = warned + everyMs - Date.now()
    if (wait <= 0) warn()
    else timer = setTimeout(warn, wait).unref()
  }
}
