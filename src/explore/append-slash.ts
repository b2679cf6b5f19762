// The app's not-found handler, as Django resolves a path its URLconf does not match literally: the explore path
// with percent escapes is still the view, without its slash APPEND_SLASH redirects it, anything else is DRF's 404.
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
      // A relative Location and an empty HTML body, as Django's CommonMiddleware sends them.
      reply.code(301).header('location', `${target.path}/${target.query === '' ? '' : `?${target.query}`}`)
        .type('text/html; charset=utf-8').send('')
    }
  }
}
