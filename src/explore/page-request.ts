// The one reader of a page request: a raw Node request → what a page answer depends on, as plain data.
// Both paths that answer pages (the fast path before Fastify, the Fastify route) read requests here.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { tooManyFields } from '../errors.js'
import { checkRequest, type RequestCheckSettings } from '../http/request-checks.js'
import { matchExplorePath } from './explore-path.js'
import { parseRequestQuery, TOO_MANY_FIELDS, type QueryDict } from './query-string.js'
import { withoutSteering } from './steering-fields.js'

export interface PageRequestSettings extends RequestCheckSettings {
  /** CHAOS: the query's steering fields (steering-fields.ts) are no part of the page; off, they are parameters. */
  chaos: boolean
}

export class PageRequest {
  private parsed: QueryDict | null

  constructor (
    private readonly raw: IncomingMessage,
    readonly lang: string,
    /** The request target the page is made from (links, ETags and cache keys): as sent, less any steering. */
    readonly url: string,
    /** The raw query string, read (and refused) only when a page is made: a kept page does not need it. */
    private readonly queryText: string,
    /** The host Django's check accepted, for absolute links. */
    readonly linkHost: string,
    query: QueryDict | null
  ) {
    this.parsed = query
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
 * The page request of a raw request to the explore path (with its slash), or null for any other path. Throws
 * Django's refusals before a view: Host (400), target length (414). `linkHost` and `query`: Fastify's, if it has them.
 */
export function readPageRequest (
  raw: IncomingMessage, settings: PageRequestSettings, linkHost?: string, query?: QueryDict
): PageRequest | null {
  // The path first: any other request is Fastify's, which checks its Host itself.
  const sent = raw.url as string
  const url = settings.chaos ? withoutSteering(sent) : sent
  const target = matchExplorePath(url)
  if (target === null || !target.slash) return null
  const host = linkHost ?? checkRequest(raw, settings)
  // Django refuses to parse such a query at all, outside the view: no view headers on that answer.
  if (query === TOO_MANY_FIELDS) throw tooManyFields()
  // Under CHAOS the query Fastify parsed holds the steering fields: the page's is read from `url` instead.
  return new PageRequest(raw, target.lang, url, target.query, host, settings.chaos ? null : query ?? null)
}
