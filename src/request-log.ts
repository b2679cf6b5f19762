// One structured line per request, written when the answer is sent: method, URL, status and time.
// Fastify's default is two lines (incoming, completed) with whole request and reply objects.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

export class OneLineRequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request')
  }
}
