// The not-found handler, as Django resolves paths its URLconf does not match literally (escapes, APPEND_SLASH).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { notFound } from '../errors.js'
import { sendError } from '../http/error-handler.js'
import { matchExplorePath } from './explore-path.js'
import type { ExploreHandler } from './explore-route.js'

export function notFoundHandler (explore: ExploreHandler): (request: FastifyRequest, reply: FastifyReply) => void {
  return function notFoundOrExplore (request, reply) {
    const target = matchExplorePath(request.url)
    if (target === null) {
      sendError(reply, notFound())
    } else if (target.slash) {
      explore(request, reply)
    } else {
      // As Django's CommonMiddleware: a relative Location, an empty HTML body.
      reply.code(301).header('location', `${target.path}/${target.query === '' ? '' : `?${target.query}`}`)
        .type('text/html; charset=utf-8').send('')
    }
  }
}
