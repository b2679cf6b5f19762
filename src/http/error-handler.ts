// Every error a client sees, in DRF's shapes: never a stack trace, a file path or Fastify's own message.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isHttpError, refusalBody, serverError, type ErrorBody, type HttpError } from '../errors.js'
import { renderJson } from '../explore/render-page.js'

/** A bare `application/json`: Fastify would append a charset to a string. */
export function sendError (reply: FastifyReply, error: HttpError): void {
  sendBody(reply, error.statusCode, error.body, error.indent ?? null)
}

function sendBody (reply: FastifyReply, status: number, body: ErrorBody, indent: number | null): void {
  reply.code(status).header('content-type', 'application/json').send(renderJson(body, indent))
}

export function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (isHttpError(error)) {
    sendError(reply, error)
    return
  }
  const status = error.statusCode
  if (status !== undefined && status >= 400 && status < 500) {
    sendBody(reply, status, refusalBody(status), null)
    return
  }
  request.log.error({ err: error }, 'unhandled error')
  sendError(reply, serverError())
}
