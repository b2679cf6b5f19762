// The one reader of a page request for both paths: a raw Node request → what a page answer depends on.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { tooManyFields } from '../errors.js'
import { checkRequest, type RequestCheckSettings } from '../http/request-checks.js'
import { matchExplorePath } from './explore-path.js'
import { parseRequestQuery, TOO_MANY_FIELDS, type QueryDict } from './query-string.js'
import { withoutSteering } from './steering-fields.js'

export interface PageRequestSettings extends RequestCheckSettings {
  /** On, steering fields are no part of the page; off, they are parameters. */
  chaos: boolean
}

export class PageRequest {
  private parsed: QueryDict | null

  constructor (
    private readonly raw: IncomingMessage,
    readonly lang: string,
    /** For links, ETags and cache keys: as sent, less any steering. */
    readonly url: string,
    /** Parsed only when a page is made: a kept page does not need it. */
    private readonly queryText: string,
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

  /** Throws Django's 400 for more than 1,000 fields. */
  get query (): QueryDict {
    this.parsed ??= parseRequestQuery(this.queryText)
    if (this.parsed === TOO_MANY_FIELDS) throw tooManyFields()
    return this.parsed
  }
}

/** Null for any other path; throws Django's pre-view 400 and 414. `linkHost` and `query`: Fastify's, if any. */
export function readPageRequest (
  raw: IncomingMessage, settings: PageRequestSettings, linkHost?: string, query?: QueryDict
): PageRequest | null {
  // The path first: Fastify checks other requests' Host itself.
  const sent = raw.url as string
  const url = settings.chaos ? withoutSteering(sent) : sent
  const target = matchExplorePath(url)
  if (target === null || !target.slash) return null
  const host = linkHost ?? checkRequest(raw, settings)
  // Refused outside the view: no view headers on that answer.
  if (query === TOO_MANY_FIELDS) throw tooManyFields()
  // Under CHAOS Fastify's query holds the steering fields: read from `url` instead.
  return new PageRequest(raw, target.lang, url, target.query, host, settings.chaos ? null : query ?? null)
}
