// `next` and `previous` exactly as DRF's LimitOffsetPagination builds them: the request's own URL with
// `limit` and `offset` replaced (or `offset` removed), every other parameter kept, re-encoded and sorted.
import { encodeQuery, type QueryDict } from './query-string.js'

export interface PagePosition {
  count: number
  limit: number
  offset: number
  /** The offset as the client wrote it, leading zeros removed; exact even past 2^53. */
  offsetDigits: string
}

function withParams (url: string, query: QueryDict, limit: string, offset: string | null): string {
  const dict: QueryDict = Object.assign(Object.create(null) as QueryDict, query)
  dict.limit = [limit]
  if (offset === null) delete dict.offset
  else dict.offset = [offset]
  return `${url}?${encodeQuery(dict)}`
}

/** `url` is the absolute URL of the page without its query string. */
export function nextLink (url: string, query: QueryDict, { count, limit, offset }: PagePosition): string | null {
  if (offset + limit >= count) return null
  return withParams(url, query, String(limit), String(offset + limit))
}

export function previousLink (url: string, query: QueryDict, { limit, offset, offsetDigits }: PagePosition): string | null {
  if (offset <= 0) return null
  if (offset - limit <= 0) return withParams(url, query, String(limit), null)
  const previous = Number.isSafeInteger(offset)
    ? String(offset - limit)
    : (BigInt(offsetDigits) - BigInt(limit)).toString()
  return withParams(url, query, String(limit), previous)
}
