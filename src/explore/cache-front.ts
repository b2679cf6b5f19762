// Explore pages answered at the HTTP server, before Fastify sees the request. Through Fastify an
// answer also paid for routing, an eager query-string parse, the hook chain and the reply machinery:
// half of a cached answer's time, and half of an uncached one's (measured in BENCHMARKS.md). The front
// answers only what it can answer exactly as the route does: a plain GET or HEAD of a page, from an
// allowed host, whose answer is a 200, either cached or built by the same code the route uses
// (explore-route.ts, `frontPage`). Every other request (errors, conditional requests, other methods and
// paths), and every request while the app is not ready or is closing, goes to Fastify untouched.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { PageParts } from './render-page.js'

/** One answer the front sent, for the metrics and the request log. */
export interface FrontAnswer {
  reqId: string
  method: string
  url: string
  statusCode: number
  /** Milliseconds from the request to the answer handed to the socket. */
  responseTime: number
}

/** An answer the front can send: a 200 with these headers (as a cached page keeps them) and bytes. */
export interface FrontPage {
  headerList: string[]
  /** The body in one buffer, or in parts that are sent in order without being copied together. */
  body: Buffer | PageParts
}

/** The answer to a request, or undefined when Fastify is to answer it. */
export type FrontLookup = (request: IncomingMessage) => FrontPage | undefined

/** What Fastify hands a server factory: its own options, of which the HTTP server's are used here. */
interface FactoryOptions {
  http?: ServerOptions
  keepAliveTimeout?: number
  requestTimeout?: number
  connectionTimeout?: number
  maxRequestsPerSocket?: number
}

let nextId = 0

/**
 * Request ids for Fastify (its `genReqId`) and for the front alike, so ids stay unique across both.
 * Fastify's own generator, kept to a small integer for the same reason it does.
 */
export function nextRequestId (): string {
  nextId = (nextId + 1) & 0x7fffffff
  return `req-${nextId.toString(36)}`
}

export class CacheFront {
  /** Off until the app is ready, and again from the moment it starts closing. */
  open = false
  private lookup: FrontLookup | null = null
  private readonly observers: Array<(answer: FrontAnswer) => void> = []

  /** Sets how a request finds its answer, cached or built (the app does, once its snapshot is loaded). */
  setLookup (lookup: FrontLookup): void {
    this.lookup = lookup
  }

  /** Called after every answer the front sends (metrics, the request log). */
  onAnswer (observer: (answer: FrontAnswer) => void): void {
    this.observers.push(observer)
  }

  /** Fastify's `serverFactory`: the server Fastify would make, with the front in its request handler. */
  readonly serverFactory = (handler: (request: IncomingMessage, response: ServerResponse) => void, options: FactoryOptions): Server => {
    const server = createServer(options.http ?? {}, (request, response) => {
      if (!this.answer(request, response)) handler(request, response)
    })
    // What Fastify does to the server it makes itself (lib/server.js, getServerInstance).
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout)
    if (options.maxRequestsPerSocket !== undefined && options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket
    return server
  }

  /** Answers the request and returns true, or returns false having written nothing. */
  answer (request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.open || this.lookup === null) return false
    const started = performance.now()
    const page = this.lookup(request)
    if (page === undefined) return false
    response.writeHead(200, page.headerList)
    // Node writes no body for HEAD, and keeps the Content-Length of the GET, as Fastify's reply does.
    const { body } = page
    if (Buffer.isBuffer(body)) {
      response.end(body)
    } else if (request.method === 'HEAD') {
      response.end()
    } else {
      // Written in one tick, so Node sends them in one writev with the headers (it corks the socket on the
      // first write until the next tick).
      response.write(body.head, 'latin1')
      for (const view of body.items) response.write(view)
      response.end(body.tail)
    }
    if (this.observers.length > 0) {
      const answer: FrontAnswer = {
        reqId: nextRequestId(),
        method: request.method as string,
        url: request.url as string,
        statusCode: 200,
        responseTime: performance.now() - started
      }
      for (const observer of this.observers) observer(answer)
    }
    return true
  }
}
