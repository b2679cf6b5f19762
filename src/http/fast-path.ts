// Page requests answered in the HTTP server's handler before Fastify routes them (FAST_PATH, ADR 002), with the
// route's reader, page answer and writer; any request not its own goes to Fastify untouched.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { isHttpError, serverError } from '../errors.js'
import { answerPage, errorAnswer, refusalAnswer, type PageSettings, type ViewAnswer } from '../explore/page-answer.js'
import { readPageRequest, type PageRequest, type PageRequestSettings } from '../explore/page-request.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { RequestLine } from './request-log.js'
import type { AnswerWriter } from './troubled-answer.js'

export class FastPath {
  /** Off until the app is ready, and again from the moment it starts closing. */
  open = false
  private readonly observers: Array<(answered: RequestLine) => void> = []
  /** Told of a fault of ours while answering (Fastify's error handler logs those of the route). */
  onFault: (error: unknown) => void = () => {}

  constructor (
    private readonly snapshot: () => SnapshotModel | null,
    private readonly settings: PageSettings & PageRequestSettings,
    private readonly write: AnswerWriter
  ) {}

  /** Called after every answer the fast path sends (metrics, the request log). */
  onAnswer (observer: (answered: RequestLine) => void): void {
    this.observers.push(observer)
  }

  /** Answers the request and returns true, or returns false having done nothing with it. */
  answer (request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.open || (request.method !== 'GET' && request.method !== 'HEAD')) return false
    // Before the first snapshot is served, Fastify answers (a 503 for a page).
    const model = this.snapshot()
    if (model === null) return false
    const started = performance.now()
    let page: PageRequest | null
    try {
      page = readPageRequest(request, this.settings)
    } catch (error) {
      // Django's refusals before any view (Host, target length): Fastify's first hook answers them the same.
      if (!isHttpError(error)) throw error
      this.write(response, null, refusalAnswer(error), ({ status }) => this.answered(request, status, started), started)
      return true
    }
    if (page === null) return false
    let answer: ViewAnswer
    try {
      answer = answerPage(model, page, this.settings)
    } catch (error) {
      this.onFault(error)
      answer = errorAnswer(serverError(), page, this.settings, null)
    }
    this.write(response, page, answer, ({ status }) => this.answered(request, status, started), started)
    return true
  }

  private answered (request: IncomingMessage, statusCode: number, started: number): void {
    if (this.observers.length === 0) return
    const answered: RequestLine = {
      method: request.method as string,
      url: request.url as string,
      statusCode,
      responseTime: performance.now() - started
    }
    for (const observer of this.observers) observer(answered)
  }
}
