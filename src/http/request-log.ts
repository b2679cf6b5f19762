// One log line per answer for Fastify and the fast path alike, not Fastify's two with whole objects.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'

export interface RequestLine {
  method: string
  url: string
  statusCode: number
  /** Milliseconds until the answer is handed to the socket. */
  responseTime: number
}

/** `reqId` given by the fast path, which makes no child logger per answer. */
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
