// The one definition of a page answer (status, headers, body) for both paths that answer pages (ADR 002), in the
// order DRF's view works: negotiation, language, `companies`, the page. Plain TypeScript: no Fastify, no socket.
import { isHttpError, negotiatedAs, notFound, TOO_MANY_FIELDS_CODE, type HttpError } from '../errors.js'
import { allowedOrigin, corsVaries, type CorsPolicy } from '../http/cors-policy.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { entityTag, notModified } from './conditional-get.js'
import { negotiate } from './content-negotiation.js'
import { lastValue, readPageParams } from './explore-query.js'
import { pageCacheOf, pageKey, type CachedPage } from './page-cache.js'
import { pageLinks } from './page-links.js'
import type { PageRequest } from './page-request.js'
import { pageParts, renderJson, renderPage, type PageParts } from './render-page.js'
import { linkOrigin } from './request-origin.js'

/** An answer to a page request as it goes on the wire: the page, the view's error, or a refusal. */
export interface ViewAnswer {
  status: number
  /** Names and values in one list, in the order they are written (as `writeHead` takes them). */
  headers: string[]
  /** One buffer, or parts sent in order; null for none. A HEAD answer is the GET's: its writer leaves the body out. */
  body: Buffer | PageParts | null
  /**
   * Not a page: the view's own error (written whole whatever fault is simulated, as the demo server's guide
   * says), or a refusal Django makes before the view runs (no view headers, no simulated trouble at all).
   */
  error?: 'view' | 'refusal'
}

/** A page answer: a 200 (its items as views of the model: ADR 004) or a 304 (no body). */
interface PageAnswer extends ViewAnswer {
  status: 200 | 304
}

export interface PageSettings {
  maxLimit: number
  /** `https://example.com[/prefix]` for links; null: the request's own scheme and host. */
  publicBaseUrl: string | null
  trustProxy: boolean
  /** `Cache-Control: public, max-age=N` on pages; null sends none, as the original. */
  cacheMaxAge: number | null
  cors: CorsPolicy
  /** Room for whole answers per snapshot (0: none are kept). */
  pageCacheBytes: number
}

/** The headers every answer of the view carries, errors included (DRF's APIView sets them). */
export const ALLOW = 'GET, HEAD, OPTIONS'

/** DRF's Vary, then CORS's when the allowed origin depends on the request's. */
export function viewVary (cors: CorsPolicy): string {
  return corsVaries(cors) ? 'Accept, Origin' : 'Accept'
}

/**
 * The answer to a GET or HEAD of a page from `model`: the page, its 304, the view's errors (404, 406, 400) or
 * Django's refusal of too many fields. Both paths write what this returns; it throws only faults of ours.
 */
export function answerPage (model: SnapshotModel, request: PageRequest, settings: PageSettings): ViewAnswer {
  try {
    return pageAnswer(model, request, settings)
  } catch (error) {
    if (!isHttpError(error)) throw error
    if (error.code === TOO_MANY_FIELDS_CODE) return refusalAnswer(error, corsHeaders(settings, request))
    return errorAnswer(error, request, settings, error.indent ?? null)
  }
}

function pageAnswer (model: SnapshotModel, request: PageRequest, settings: PageSettings): PageAnswer {
  const cache = settings.pageCacheBytes > 0 ? pageCacheOf(model, settings.pageCacheBytes) : null
  const key = cache === null ? null : pageKey(request, settings.trustProxy, corsVaries(settings.cors))
  const cached = key === null ? undefined : cache?.get(key)
  if (cached !== undefined) return cachedAnswer(cached, request)

  const { indent } = negotiate(request.headers.accept, lastValue(request.query, 'format'))
  const listing = model.language(request.lang)
  let params
  try {
    if (listing === undefined) throw notFound()
    params = readPageParams(request.query, settings.maxLimit)
  } catch (error) {
    // DRF renders the view's errors with the renderer it negotiated: `indent` applies to them too.
    throw negotiatedAs(error as HttpError, indent)
  }
  const origin = linkOrigin(request, settings)
  const etag = entityTag(model.info.contentVersion ?? model.info.version, origin, request.url, indent)
  const headers = pageHeaders(settings, request, etag)
  // Decided before the page is made: a current copy costs no page.
  if (notModified(request.headers['if-none-match'], etag)) return notModifiedAnswer(headers)

  const page = listing.page(params.companies, params.offset, params.limit)
  const { next, previous } = pageLinks(
    `${origin}/${request.lang}/api/internal/explore/`, request.query, { count: page.count, ...params }
  )
  const envelope = { count: page.count, next, previous, items: page.items }
  // A page to keep, or an indented one (rare), is made in one buffer; any other is sent as views (ADRs 001, 004).
  const kept = key !== null && cache !== null && cache.wants(key)
  const body = kept || indent !== null ? renderPage(envelope, indent) : pageParts(envelope)
  headers.push('content-length', String(Buffer.isBuffer(body) ? body.length : body.byteLength))
  const answer: PageAnswer = { status: 200, headers, body }
  if (kept) cache.keep(key, answer as CachedPage)
  return answer
}

/** A page's links name a forwarded host and scheme when they come from them: a shared cache must tell them apart. */
function pageVary (settings: PageSettings): string {
  const vary = viewVary(settings.cors)
  return settings.trustProxy && settings.publicBaseUrl === null ? `${vary}, X-Forwarded-Host, X-Forwarded-Proto` : vary
}

/** A page's headers but its length, in the original stack's order: CORS's (@fastify/cors's hook), the view's. */
function pageHeaders (settings: PageSettings, request: PageRequest, etag: string): string[] {
  const headers = viewHeaders(settings, request, pageVary(settings))
  headers.push('etag', etag)
  if (settings.cacheMaxAge !== null) headers.push('cache-control', `public, max-age=${settings.cacheMaxAge}`)
  return headers
}

/** The headers every answer of the view starts with, its errors' too: CORS's, then the view's. */
function viewHeaders (settings: PageSettings, request: PageRequest, vary = viewVary(settings.cors)): string[] {
  const { cors } = settings
  const headers = corsHeaders(settings, request, vary)
  headers.push('allow', ALLOW)
  if (!corsVaries(cors)) headers.push('vary', vary)
  headers.push('content-type', 'application/json')
  return headers
}

/** What @fastify/cors's hook sets first: Vary (the view's, when it answers) and the allowed origin. */
function corsHeaders (settings: PageSettings, request: PageRequest, vary = 'Origin'): string[] {
  const { cors } = settings
  const headers: string[] = []
  const allowOrigin = allowedOrigin(cors, request.headers.origin)
  if (corsVaries(cors)) headers.push('vary', vary)
  if (allowOrigin !== null) headers.push('access-control-allow-origin', allowOrigin)
  return headers
}

/**
 * An error of the view as DRF's exception handler writes it: indented as negotiated (compact if that failed),
 * the wait as Retry-After, the view's headers with CORS's (a browser app must see the status). Never cached.
 */
export function errorAnswer (
  error: HttpError, request: PageRequest, settings: PageSettings, indent = negotiatedIndent(request)
): ViewAnswer {
  const headers = viewHeaders(settings, request)
  if (error.wait !== undefined) headers.push('retry-after', String(error.wait))
  const body = renderJson(error.body, indent)
  headers.push('content-length', String(body.length))
  return { status: error.statusCode, headers, body, error: 'view' }
}

/** The indentation the request negotiates, or null (compact) when negotiation fails. */
function negotiatedIndent (request: PageRequest): number | null {
  try {
    return negotiate(request.headers.accept, lastValue(request.query, 'format')).indent
  } catch (refusal) {
    if (!isHttpError(refusal)) throw refusal
    return null
  }
}

/** A refusal Django makes before any view runs (the error handler's shape): `first` headers, then the body's. */
export function refusalAnswer (error: HttpError, first: string[] = []): ViewAnswer {
  const body = renderJson(error.body, null)
  return {
    status: error.statusCode,
    headers: [...first, 'content-type', 'application/json', 'content-length', String(body.length)],
    body,
    error: 'refusal'
  }
}

/** A kept page, or its 304 when the client's copy is current. */
function cachedAnswer (page: CachedPage, request: PageRequest): PageAnswer {
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch === undefined) return page
  const { headers } = page
  return notModified(ifNoneMatch, headers[headers.indexOf('etag') + 1] as string) ? notModifiedAnswer(headers) : page
}

/** RFC 9110 §15.4.5: the 200's headers but those that describe its body. */
function notModifiedAnswer (headers: readonly string[]): PageAnswer {
  const kept: string[] = []
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] as string
    if (name !== 'content-type' && name !== 'content-length') kept.push(name, headers[i + 1] as string)
  }
  return { status: 304, headers: kept, body: null }
}
