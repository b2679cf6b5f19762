// GET/HEAD/OPTIONS /{lang}/api/internal/explore/ and every other method on it, answered in the order
// DRF's APIView works: query fields, content negotiation, method, language, `companies`, then the page.
import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyCorsOptions } from '@fastify/cors'
import { methodNotAllowed, notFound, tooManyFields } from '../errors.js'
import {
  CompaniesErrorSchema, ErrorDetailSchema, ExplorePageSchema, ExploreParamsSchema, ExploreQuerySchema,
  OptionsMetadataSchema, type OptionsMetadata
} from '../schemas/explore-response.js'
import type { SnapshotModel } from '../snapshot/snapshot-model.js'
import { entityTag, notModified } from './conditional-get.js'
import { negotiate } from './content-negotiation.js'
import { lastValue, readCompanies, readLimit, readOffset } from './explore-query.js'
import { nextLink, previousLink } from './page-links.js'
import { TOO_MANY_FIELDS, type QueryDict } from './query-string.js'
import { renderJson, renderPage } from './render-page.js'
import { pageCacheOf } from './page-cache.js'
import { linkOrigin, type OriginOptions } from './request-origin.js'

export const EXPLORE_PATH = '/:lang/api/internal/explore/'
export const LANGUAGE = /^[a-z]{2}(-[a-z]{2,4})?$/
const ALLOW = 'GET, HEAD, OPTIONS'

// The view's docstring, which DRF's SimpleMetadata reports as the description.
const METADATA: OptionsMetadata = {
  name: 'Explore',
  description: 'Articles and stories linked to a company, newest first.',
  renders: ['application/json'],
  parses: ['application/json']
}

export interface ExploreViewOptions extends Omit<OriginOptions, 'allowedHosts'> {
  /** The model a request is answered from; read once per request, so a swap never mixes two. */
  snapshot: () => SnapshotModel
  maxLimit: number
  /** `Cache-Control: public, max-age=N` on pages; null sends none, as the original. */
  cacheMaxAge: number | null
  /** CORS is limited to listed origins, so answers vary by Origin too. */
  corsVaries: boolean
  /** Room for whole answers per snapshot (0: none are kept). */
  pageCacheBytes: number
}

declare module 'fastify' {
  // @fastify/cors merges a route's `config.cors` over its options (index.js, addCorsHeadersHandler)
  // but does not declare it.
  interface FastifyContextConfig {
    cors?: false | FastifyCorsOptions
  }
  interface FastifyRequest {
    /** The indentation content negotiation settled on; null until then, or for compact JSON. */
    jsonIndent: number | null
    /** The Host (or trusted X-Forwarded-Host), checked once by the first hook. */
    linkHost: string
    /** The page cache key of a GET or HEAD, or null when the answer is not to be cached. */
    pageKey: string | null
  }
}

export type ExploreAnswer = (request: FastifyRequest, reply: FastifyReply, lang: string) => Promise<Buffer | FastifyReply>

/** The view: answers any method on the explore path of language segment `lang`. */
export function exploreAnswer (options: ExploreViewOptions): ExploreAnswer {
  const { snapshot, maxLimit, pageCacheBytes } = options
  const cacheControl = options.cacheMaxAge === null ? null : `public, max-age=${options.cacheMaxAge}`
  // DRF's Vary, then CORS's when the allowed origin depends on the request's.
  const vary = options.corsVaries ? 'Accept, Origin' : 'Accept'

  return async function explore (request, reply, lang) {
    // A segment that is not a language is a path the original's URLconf does not know at all.
    if (!LANGUAGE.test(lang)) {
      reply.callNotFound()
      return reply
    }
    // Too many fields fails as Django parses the query, outside the view: no view headers then.
    const query = request.query as QueryDict
    if (query === TOO_MANY_FIELDS) throw tooManyFields()
    reply.header('allow', ALLOW)
    reply.header('vary', vary)
    reply.type('application/json')

    const { indent } = negotiate(request.headers.accept, lastValue(query, 'format'))
    // DRF renders the view's errors with the renderer it negotiated: `indent` applies to them too.
    request.jsonIndent = indent
    const method = request.method
    if (method === 'OPTIONS') return renderJson(METADATA, indent)
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method)

    const model = snapshot()
    const listing = model.language(lang)
    if (listing === undefined) throw notFound()
    const companies = readCompanies(query)
    const limit = readLimit(query, maxLimit)
    const { offset, digits } = readOffset(query)
    const origin = linkOrigin(request, options)
    const etag = entityTag(model.info.version, origin, request.url, indent)
    reply.header('etag', etag)
    if (cacheControl !== null) reply.header('cache-control', cacheControl)
    if (notModified(request.headers['if-none-match'], etag)) {
      reply.code(304)
      reply.removeHeader('content-type')
      return reply.send()
    }
    const page = listing.page(companies, offset, limit)
    const url = `${origin}/${lang}/api/internal/explore/`
    const position = { count: page.count, limit, offset, offsetDigits: digits }
    const body = renderPage({
      count: page.count,
      next: nextLink(url, query, position),
      previous: previousLink(url, query, position),
      items: page.items
    }, indent)
    // Kept in the cache of the model it came from, with the headers it goes out with.
    if (request.pageKey !== null && pageCacheBytes > 0) {
      pageCacheOf(model, pageCacheBytes).set(request.pageKey, { body, etag, headers: reply.getHeaders() as Record<string, string> })
    }
    return body
  }
}

export async function exploreRoute (app: FastifyInstance, { answer }: { answer: ExploreAnswer }): Promise<void> {
  const explore = (request: FastifyRequest<{ Params: { lang: string } }>, reply: FastifyReply) => answer(request, reply, request.params.lang)

  app.get(EXPLORE_PATH, {
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

  app.options(EXPLORE_PATH, {
    schema: { summary: 'The view\'s metadata (DRF SimpleMetadata)', params: ExploreParamsSchema, response: { 200: OptionsMetadataSchema } }
  }, explore)
  // A CORS preflight is answered by @fastify/cors in its hook; the handler runs only when CORS is off.
  app.options(EXPLORE_PATH, {
    constraints: { corsPreflight: 'yes' },
    config: { cors: { preflight: true } },
    schema: { hide: true }
  }, explore)

  // Every other method gets DRF's 405 (after content negotiation, as in DRF). CONNECT never reaches a
  // route in Node, so it is left out.
  const others = METHODS.filter(m => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS' && m !== 'CONNECT')
  for (const method of others) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true })
  }
  app.route({ method: others, url: EXPLORE_PATH, schema: { hide: true }, handler: explore })
}
