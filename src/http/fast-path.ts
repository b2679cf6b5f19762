// Page requests answered at the HTTP server, before Fastify routes them (FAST_PATH). Through Fastify an
// answer also pays for routing, request and reply objects and the hook chain: docs/decisions/002 measures what
// that costs against this path. The fast path answers a GET or HEAD of a page only when the page answer
// is a 200 or a 304, with the same reader, answer and writer the route uses; every other request (errors,
// other methods and paths), and every request while the app is not ready or is closing, goes to Fastify
// untouched, which answers it from the start. Simulated trouble (DELAY_MS, FAULT, …) is drawn for a request
// once its page answer is made, and acted out by the same writer the route uses (troubled-answer.ts).
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { answerPage, type PageSettings } from '../explore/page-answer.js'
import { readPageRequest, type PageRequestSettings } from '../explore/page-request.js'
import type { SimulatedTrouble } from '../explore/simulated-trouble.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { RequestLine } from './request-log.js'
import { answerWithTrouble } from './troubled-answer.js'
import { writeAnswer } from './write-answer.js'

/** What Fastify hands a server factory: its own options, of which the HTTP server's are used here. */
interface FactoryOptions {
  http?: ServerOptions
  keepAliveTimeout?: number
  requestTimeout?: number
  connectionTimeout?: number
  maxRequestsPerSocket?: number
}

export class FastPath {
  /** Off until the app is ready, and again from the moment it starts closing. */
  open = false
  private readonly observers: Array<(answered: RequestLine) => void> = []

  constructor (
    private readonly snapshot: () => SnapshotModel | null,
    private readonly settings: PageSettings & PageRequestSettings,
    /** Simulated trouble, or null (then no page request gets any). */
    private readonly troubles: SimulatedTrouble | null = null
  ) {}

  /** Called after every answer the fast path sends (metrics, the request log). */
  onAnswer (observer: (answered: RequestLine) => void): void {
    this.observers.push(observer)
  }

  /** Fastify's `serverFactory`: the server Fastify would make, with the fast path in its request handler. */
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
    if (!this.open || (request.method !== 'GET' && request.method !== 'HEAD')) return false
    const started = performance.now()
    const model = this.snapshot()
    // Before the first snapshot is served, Fastify answers (a 503 for a page).
    if (model === null) return false
    let page
    let answer
    try {
      page = readPageRequest(request, this.settings)
      if (page === null) return false
      answer = answerPage(model, page, this.settings)
    } catch {
      return false // a refusal or an error of the view: Fastify's to answer, with its error handler (and trouble)
    }
    const { troubles } = this
    const trouble = troubles?.draw(page) ?? null
    if (troubles === null || trouble === null) {
      writeAnswer(response, answer)
      this.answered(request, answer.status, started)
    } else {
      answerWithTrouble(troubles, {
        response,
        trouble,
        answer,
        take: () => {},
        refuse: () => {}, // never called: the fast path holds a page answer, never an error
        written: ({ status }) => this.answered(request, status, started)
      })
    }
    return true
  }

  private answered (request: IncomingMessage, statusCode: number, started: number): void {
    if (this.observers.length === 0) return
    const answered: RequestLine = { method: request.method as string, url: request.url as string, statusCode, responseTime: performance.now() - started }
    for (const observer of this.observers) observer(answered)
  }
}
