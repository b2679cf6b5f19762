// GET/HEAD/OPTIONS /{lang}/api/internal/explore/ and every other method on it, answered in the order
// DRF's APIView works: query fields, content negotiation, method, language, `companies`, then the page.
import { METHODS, type IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyCorsOptions } from '@fastify/cors'
import { methodNotAllowed, notFound, tooManyFields } from '../errors.js'
import {
  CompaniesErrorSchema, ErrorDetailSchema, ExplorePageSchema, ExploreParamsSchema, ExploreQuerySchema,
  OptionsMetadataSchema, type OptionsMetadata
} from '../schemas/explore-response.js'
import { LANGUAGE, LANGUAGE_PATTERN } from '../schemas/snapshot.js'
import type { LanguageListing, SnapshotModel } from '../snapshot/snapshot-model.js'
import { entityTag, notModified } from './conditional-get.js'
import { negotiate } from './content-negotiation.js'
import { lastValue, readPageParams, type PageParams } from './explore-query.js'
import { pageLinks } from './page-links.js'
import { parseRequestQuery, TOO_MANY_FIELDS, type QueryDict } from './query-string.js'
import { pageParts, renderJson, renderPage, type PageEnvelope } from './render-page.js'
import { headerListOf, pageCacheOf, type PageCache } from './page-cache.js'
import { allocAnswer, ownAnswer } from './page-slab.js'
import type { FrontPage } from './cache-front.js'
import { linkOrigin, type OriginOptions } from './request-origin.js'

export const EXPLORE_PATH = '/:lang/api/internal/explore/'
// A language segment as the snapshot format defines it (`en`, `pt-br`), inside a path.
const LANGUAGE_SEGMENT = LANGUAGE_PATTERN.slice(1, -1) // without its ^ and $
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

/** What a page holds: its items, count and links. Shared by the route and the cache front. */
function pageEnvelope (listing: LanguageListing, query: QueryDict, url: string, { companies, limit, offset, offsetDigits }: PageParams): PageEnvelope {
  const page = listing.page(companies, offset, limit)
  const { next, previous } = pageLinks(url, query, { count: page.count, limit, offset, offsetDigits })
  return { count: page.count, next, previous, items: page.items }
}

/** A page's bytes, in one buffer; `kept` when the page cache will keep it (then in memory of its own). */
export function pageBody (listing: LanguageListing, query: QueryDict, url: string, params: PageParams, indent: number | null, kept = false): Buffer {
  return renderPage(pageEnvelope(listing, query, url, params), indent, kept ? ownAnswer : allocAnswer)
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
    const params = readPageParams(query, maxLimit)
    const origin = linkOrigin(request, options)
    const etag = entityTag(model.info.version, origin, request.url, indent)
    reply.header('etag', etag)
    if (cacheControl !== null) reply.header('cache-control', cacheControl)
    if (notModified(request.headers['if-none-match'], etag)) {
      reply.code(304)
      reply.removeHeader('content-type')
      return reply.send()
    }
    // Kept in the cache of the model it came from, with the headers it goes out with, if the cache wants it.
    const key = request.pageKey
    const cache = key !== null && pageCacheBytes > 0 ? pageCacheOf(model, pageCacheBytes) : null
    const kept = cache !== null && cache.wants(key as string)
    const body = pageBody(listing, query, `${origin}/${lang}/api/internal/explore/`, params, indent, kept)
    if (kept) cache.keep(key as string, { body, etag, headerList: headerListOf(reply.getHeaders() as Record<string, string>, body.length) })
    return body
  }
}

// The explore path as a client writes it: nothing percent-encoded, nothing after a `#` or `;` for the
// router to reinterpret. Other spellings reach the route through Fastify.
const PLAIN_TARGET = new RegExp(`^/(?<lang>${LANGUAGE_SEGMENT})/api/internal/explore/(?:\\?(?<query>[^#;]*))?$`)

export interface FrontPageOptions extends Omit<ExploreViewOptions, 'snapshot'> {
  /** `Access-Control-Allow-Origin: *` on every answer (CORS `*`), or no CORS header (CORS off). */
  corsAnyOrigin: boolean
}

/**
 * For the cache front: the answer the route would give a plain GET or HEAD of a page, or undefined
 * when the route might answer anything but a 200 (then Fastify answers it, from the start). The same
 * checks in the same order as `explore` above, the same headers in the order Fastify writes them, the
 * same page cache. `model` is the snapshot the front read for this request, `cache` its page cache,
 * `host` the Host the front checked, `key` the request's page cache key.
 */
export function frontPage (options: FrontPageOptions): (request: IncomingMessage, model: SnapshotModel, cache: PageCache, host: string, key: string) => FrontPage | undefined {
  const { maxLimit, corsAnyOrigin } = options
  const cacheControl = options.cacheMaxAge === null ? null : `public, max-age=${options.cacheMaxAge}`
  return (request, model, cache, host, key) => {
    const url = request.url as string
    const target = PLAIN_TARGET.exec(url)?.groups
    if (target === undefined) return undefined
    const lang = target.lang as string
    const query = parseRequestQuery(target.query ?? '')
    if (query === TOO_MANY_FIELDS) return undefined
    const listing = model.language(lang)
    if (listing === undefined) return undefined
    let indent: number | null
    let params: PageParams
    try {
      indent = negotiate(request.headers.accept, lastValue(query, 'format')).indent
      params = readPageParams(query, maxLimit)
    } catch {
      return undefined // a 400, 404 or 406: the route's to answer
    }
    const origin = linkOrigin({ linkHost: host, headers: request.headers, socket: request.socket }, options)
    const etag = entityTag(model.info.version, origin, url, indent)
    const envelope = pageEnvelope(listing, query, `${origin}/${lang}/api/internal/explore/`, params)
    // A page the cache will keep is made in memory of its own, an indented one (rare) in one buffer; any
    // other is sent in parts, its items straight from the model.
    const kept = cache.wants(key)
    const body = kept ? renderPage(envelope, indent, ownAnswer) : indent !== null ? renderPage(envelope, indent) : pageParts(envelope)
    // Written out rather than copied from an object: this runs for every uncached page.
    const headerList = corsAnyOrigin ? ['access-control-allow-origin', '*'] : []
    headerList.push('allow', ALLOW, 'vary', 'Accept', 'content-type', 'application/json', 'etag', etag)
    if (cacheControl !== null) headerList.push('cache-control', cacheControl)
    headerList.push('content-length', String(Buffer.isBuffer(body) ? body.length : body.byteLength))
    if (kept && Buffer.isBuffer(body)) cache.keep(key, { body, etag, headerList })
    return { body, headerList }
  }
}

export async function exploreRoute (app: FastifyInstance, { answer }: { answer: ExploreAnswer }): Promise<void> {
  const explore = (request: FastifyRequest<{ Params: { lang: string } }>, reply: FastifyReply) => answer(request, reply, request.params.lang)

  app.get(EXPLORE_PATH, {
    // The parameter schemas document the route; they are never used to refuse a request (DRF refuses
    // nothing but a bad `companies`, with its own body), and our query parser only ever yields arrays of
    // strings, which is all they say. Checking that again on every request cost an uncached answer ~2%.
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
