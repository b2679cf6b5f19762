// One log line per request, when the answer is sent, for Fastify's answers (this LogController) and the fast
// path's alike, where Fastify's default is two lines with whole request and reply objects.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'

/** What the line says of an answer. */
export interface RequestLine {
  method: string
  url: string
  statusCode: number
  /** Milliseconds from the request to the answer handed to the socket. */
  responseTime: number
}

/**
 * Writes the line. `log` is Fastify's request logger (a child that carries the `reqId`), or the app's with
 * the `reqId` given (the fast path makes no child per answer).
 */
export function logRequest (log: FastifyBaseLogger, line: RequestLine, reqId?: string): void {
  log.info(reqId === undefined ? line : { reqId, ...line }, 'request')
}

export class OneLineRequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    const line: RequestLine = {
      method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime
    }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else logRequest(reply.log, line)
  }
}
