// The one reader of a page request: a raw Node request → what a page answer depends on, as plain data.
// Both paths that answer pages (the fast path before Fastify, the Fastify route) read requests here.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { tooManyFields } from '../errors.js'
import { checkRequest, type RequestCheckSettings } from '../http/request-checks.js'
import { matchExplorePath } from './explore-path.js'
import { parseRequestQuery, TOO_MANY_FIELDS, unquotePlus, type QueryDict } from './query-string.js'

/**
 * The query fields a request steers its trouble with under CHAOS (`__code` is Prism's own spelling of
 * `__status`). Under CHAOS they are not part of the page: left out of its links, its ETag and its cache key.
 */
export const STEERING_FIELDS: ReadonlySet<string> = new Set(['__delay', '__status', '__code'])

export interface PageRequestSettings extends RequestCheckSettings {
  /**
   * CHAOS: a request may ask for its own trouble with the query's steering fields (simulated-trouble.ts),
   * which are then no part of the page. Off, they are parameters like any other, kept in links as DRF does.
   */
  chaos: boolean
}

export class PageRequest {
  private parsed: QueryDict | null
  /** Under CHAOS: the target and the query without the steering fields, made once when first asked. */
  private plainUrl: string | null = null
  private plainQuery: QueryDict | null = null

  constructor (
    private readonly raw: IncomingMessage,
    readonly lang: string,
    /** The raw query string, read (and refused) only when a page is made: a kept page does not need it. */
    private readonly queryText: string,
    /** The host Django's check accepted, for absolute links. */
    readonly linkHost: string,
    query: QueryDict | null,
    private readonly chaos = false
  ) {
    this.parsed = query
  }

  /**
   * The request target as sent: links, ETags and cache keys are made from it. Under CHAOS, without its
   * steering fields: the page of `?companies=7&__delay=500` is the page of `?companies=7`, the same bytes
   * under the same key (what the field asks for is done outside the page and outside the cache).
   */
  get url (): string {
    if (!this.chaos) return this.raw.url as string
    this.plainUrl ??= withoutSteering(this.raw.url as string)
    return this.plainUrl
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
    if (!this.chaos) return this.parsed
    if (this.plainQuery === null) {
      this.plainQuery = Object.assign(Object.create(null) as QueryDict, this.parsed)
      for (const field of STEERING_FIELDS) delete this.plainQuery[field]
    }
    return this.plainQuery
  }

  /** Under CHAOS, the last value of each steering field the query has (as QueryDict.get reads it); else none. Never throws. */
  get steering (): Record<string, string | undefined> {
    const steering: Record<string, string | undefined> = {}
    if (!this.chaos) return steering
    this.parsed ??= parseRequestQuery(this.queryText)
    for (const field of STEERING_FIELDS) steering[field] = this.parsed[field]?.at(-1)
    return steering
  }
}

/** A request target without the query fields whose key (decoded as Django decodes it) is a steering field. */
function withoutSteering (target: string): string {
  const mark = target.indexOf('?')
  // Most targets name no steering field: no key can decode to one without `__` or an escaped `_` (%5F).
  if (mark < 0 || !/__|%5f/i.test(target)) return target
  const kept = target.slice(mark + 1).split('&').filter(field => {
    const eq = field.indexOf('=')
    return !STEERING_FIELDS.has(unquotePlus(eq < 0 ? field : field.slice(0, eq)))
  })
  return kept.length === 0 ? target.slice(0, mark) : `${target.slice(0, mark)}?${kept.join('&')}`
}

/**
 * The page request of a raw request to the explore path (with its slash), or null for any other path.
 * Throws the refusals Django makes before a view runs: Host (400), target length (414). `linkHost` and
 * `query` are passed when Fastify has checked and parsed them already; a query Fastify parsed is refused
 * here if it has too many fields, one read here when it is first used.
 */
export function readPageRequest (raw: IncomingMessage, settings: PageRequestSettings, linkHost?: string, query?: QueryDict): PageRequest | null {
  // The path first: any other request is Fastify's, which checks its Host itself.
  const target = matchExplorePath(raw.url as string)
  if (target === null || !target.slash) return null
  const host = linkHost ?? checkRequest(raw, settings)
  // Django refuses to parse such a query at all, outside the view: no view headers on that answer.
  if (query === TOO_MANY_FIELDS) throw tooManyFields()
  return new PageRequest(raw, target.lang, target.query, host, query ?? null, settings.chaos)
}
