// The one reader of a page request: a raw Node request → what a page answer depends on, as plain data.
// Both paths that answer pages (the fast path before Fastify, the Fastify route) read requests here.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { tooManyFields } from '../errors.js'
import { checkRequest, type RequestCheckSettings } from '../http/request-checks.js'
import { matchExplorePath } from './explore-path.js'
import { parseRequestQuery, TOO_MANY_FIELDS, type QueryDict } from './query-string.js'

export interface PageRequest {
  method: string
  /** The request target as sent: links, ETags and cache keys are made from it. */
  url: string
  lang: string
  query: QueryDict
  /** The host Django's check accepted, for absolute links. */
  linkHost: string
  headers: IncomingHttpHeaders
  /** Header names and values as received (a repeated Host is refused by the check). */
  rawHeaders: string[]
  socket: { encrypted?: boolean, localAddress?: string | undefined, localPort?: number | undefined }
}

/**
 * The page request of a raw request to the explore path (with its slash), or null for any other path.
 * Throws the refusals Django makes before a view runs: Host (400), target length (414), too many query
 * fields (400). `linkHost` and `query` are passed when Fastify has checked and parsed them already.
 */
export function readPageRequest (raw: IncomingMessage, settings: RequestCheckSettings, linkHost?: string, query?: QueryDict): PageRequest | null {
  const host = linkHost ?? checkRequest(raw, settings)
  const url = raw.url as string
  const target = matchExplorePath(url)
  if (target === null || !target.slash) return null
  const fields = query ?? parseRequestQuery(target.query)
  // Django refuses to parse such a query at all, outside the view: no view headers on that answer.
  if (fields === TOO_MANY_FIELDS) throw tooManyFields()
  return { method: raw.method as string, url, lang: target.lang, query: fields, linkHost: host, headers: raw.headers, rawHeaders: raw.rawHeaders, socket: raw.socket }
}
