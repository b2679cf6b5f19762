// The one reader of a page request: a raw Node request → what a page answer depends on, as plain data.
// Both paths that answer pages (the fast path before Fastify, the Fastify route) read requests here.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { tooManyFields } from '../errors.js'
import { checkRequest, type RequestCheckSettings } from '../http/request-checks.js'
import { matchExplorePath } from './explore-path.js'
import { parseRequestQuery, TOO_MANY_FIELDS, type QueryDict } from './query-string.js'

export class PageRequest {
  private parsed: QueryDict | null

  constructor (
    private readonly raw: IncomingMessage,
    readonly lang: string,
    /** The raw query string, read (and refused) only when a page is made: a kept page does not need it. */
    private readonly queryText: string,
    /** The host Django's check accepted, for absolute links. */
    readonly linkHost: string,
    query: QueryDict | null
  ) {
    this.parsed = query
  }

  /** The request target as sent: links, ETags and cache keys are made from it. */
  get url (): string {
    return this.raw.url as string
  }

  get headers (): IncomingHttpHeaders {
    return this.raw.headers
  }

  get socket (): { encrypted?: boolean } {
    return this.raw.socket as { encrypted?: boolean }
  }

  /** The query as Django's QueryDict; throws Django's 400 for more than 1,000 fields. */
  get query (): QueryDict {
    this.parsed ??= parseRequestQuery(this.queryText)
    if (this.parsed === TOO_MANY_FIELDS) throw tooManyFields()
    return this.parsed
  }
}

/**
 * The page request of a raw request to the explore path (with its slash), or null for any other path.
 * Throws the refusals Django makes before a view runs: Host (400), target length (414). `linkHost` and
 * `query` are passed when Fastify has checked and parsed them already; a query Fastify parsed is refused
 * here if it has too many fields, one read here when it is first used.
 */
export function readPageRequest (raw: IncomingMessage, settings: RequestCheckSettings, linkHost?: string, query?: QueryDict): PageRequest | null {
  // The path first: any other request is Fastify's, which checks its Host itself.
  const target = matchExplorePath(raw.url as string)
  if (target === null || !target.slash) return null
  const host = linkHost ?? checkRequest(raw, settings)
  // Django refuses to parse such a query at all, outside the view: no view headers on that answer.
  if (query === TOO_MANY_FIELDS) throw tooManyFields()
  return new PageRequest(raw, target.lang, target.query, host, query ?? null)
}
