// Every method on the explore path through Fastify, checked in the order of DRF's APIView.
import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyCorsOptions } from '@fastify/cors'
import { methodNotAllowed, negotiatedAs, snapshotLoading } from '../errors.js'
import type { AnswerWriter } from '../http/troubled-answer.js'
import {
  CompaniesErrorSchema, ErrorDetailSchema, ExplorePageSchema, ExploreParamsSchema, ExploreQuerySchema,
  OptionsMetadataSchema, type OptionsMetadata
} from '../schemas/explore-response.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { negotiate } from './content-negotiation.js'
import { EXPLORE_ROUTE } from './explore-path.js'
import { lastValue } from './explore-query.js'
import { ALLOW, answerPage, errorAnswer, viewVary, type PageSettings } from './page-answer.js'
import { readPageRequest, type PageRequestSettings } from './page-request.js'
import type { QueryDict } from './query-string.js'
import { renderJson } from './render-page.js'

// The view's docstring, which DRF's SimpleMetadata reports as the description.
const METADATA: OptionsMetadata = {
  name: 'Explore',
  description: 'Articles and stories linked to a company, newest first.',
  renders: ['application/json'],
  parses: ['application/json']
}

declare module 'fastify' {
  // @fastify/cors reads a route's `config.cors` (index.js, addCorsHeadersHandler) but does not declare it.
  interface FastifyContextConfig {
    cors?: false | FastifyCorsOptions
  }
}

export type ExploreHandler = (request: FastifyRequest, reply: FastifyReply) => void

/** Also called by the not-found handler for encoded spellings. */
export function exploreView (
  snapshot: () => SnapshotModel | null, settings: PageSettings & PageRequestSettings, write: AnswerWriter
): ExploreHandler {
  const vary = viewVary(settings.cors)
  return function explore (request, reply) {
    // Fastify parses the query on a matched route only; else it is read from the raw request.
    const query = request.routeOptions.url === undefined ? undefined : request.query as QueryDict
    const page = readPageRequest(request.raw, settings, request.linkHost, query)
    // Not a language, or a path only the router took for this one.
    if (page === null) {
      reply.callNotFound()
      return
    }
    // First, so that the view's errors carry them too.
    reply.header('allow', ALLOW).header('vary', vary).header('content-type', 'application/json')
    const method = request.method
    if (method === 'GET' || method === 'HEAD') {
      const model = snapshot()
      const answer = model === null
        ? errorAnswer(snapshotLoading(), page, settings, null)
        : answerPage(model, page, settings)
      // Fastify's onResponse still logs, counts and times it.
      reply.hijack()
      write(reply.raw, page, answer, () => {})
      return
    }
    const { indent } = negotiate(request.headers.accept, lastValue(page.query, 'format'))
    if (method !== 'OPTIONS') throw negotiatedAs(methodNotAllowed(method), indent)
    reply.send(renderJson(METADATA, indent))
  }
}

export async function exploreRoutes (app: FastifyInstance, { explore }: { explore: ExploreHandler }): Promise<void> {
  app.get(EXPLORE_ROUTE, {
    // Schemas only document: DRF refuses only a bad `companies`, and validating cost an uncached answer ~2%.
    validatorCompiler: () => () => true,
    schema: {
      summary: 'A page of content items linked to a company, newest first',
      params: ExploreParamsSchema,
      querystring: ExploreQuerySchema,
      response: {
        200: ExplorePageSchema,
        400: { ...CompaniesErrorSchema, description: 'A `companies` value is not a whole number.' },
        404: { ...ErrorDetailSchema, description: 'The snapshot has no such language, or `format` is not json.' },
        406: { ...ErrorDetailSchema, description: 'The Accept header admits no application/json.' }
      }
    }
  }, explore)

  app.options(EXPLORE_ROUTE, {
    schema: {
      summary: 'The view\'s metadata (DRF SimpleMetadata)',
      params: ExploreParamsSchema,
      response: { 200: OptionsMetadataSchema }
    }
  }, explore)
  // @fastify/cors answers a preflight in its hook; the handler runs only when CORS is off.
  app.options(EXPLORE_ROUTE, {
    constraints: { corsPreflight: 'yes' },
    config: { cors: { preflight: true } },
    schema: { hide: true }
  }, explore)

  // DRF's 405 (after negotiation); CONNECT never reaches a route in Node. Every method is known (public-app.ts).
  const others = METHODS.filter(m => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS' && m !== 'CONNECT')
  app.route({ method: others, url: EXPLORE_ROUTE, schema: { hide: true }, handler: explore })
}
