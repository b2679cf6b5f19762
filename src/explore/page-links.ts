// `next` and `previous` as DRF's LimitOffsetPagination builds them; the query encoded once for both.
import { compareCodePoints, quotePlusInto, scratchOf, UNRESERVED, type QueryDict } from './query-string.js'

interface PagePosition {
  count: number
  limit: number
  offset: number
  /** Exact even past 2^53. */
  offsetDigits: string
}

interface PageLinks {
  next: string | null
  previous: string | null
}

/** `urlencode(sorted(...), doseq=True)` split around `limit` and `offset`, `&` on the side that joins them. */
interface QueryTemplate {
  beforeLimit: string
  between: string
  afterOffset: string
}

/** Python's order of the keys: UTF-16's, the engine's own sort, unless a key holds a surrogate (compareCodePoints). */
function sortedKeys (query: QueryDict): string[] {
  const keys = Object.keys(query).filter(key => key !== 'limit' && key !== 'offset')
  if (keys.length < 2) return keys
  return keys.some(key => SURROGATE.test(key)) ? keys.sort(compareCodePoints) : keys.sort()
}

const SURROGATE = /[\ud800-\udfff]/

/** 0 before `limit`, 1 between `limit` and `offset`, 2 after. */
function sideOf (key: string): number {
  return compareCodePoints(key, 'limit') < 0 ? 0 : compareCodePoints(key, 'offset') < 0 ? 1 : 2
}

/**
 * Fields quote_plus leaves as they are (the usual query) are joined as strings; any other query is written once into
 * one buffer and read back as the three parts (two native calls a field, for a query of 1,000 fields, cost more than
 * the page).
 */
function template (query: QueryDict): QueryTemplate {
  const keys = sortedKeys(query)
  let plain = true
  let room = 0
  for (const key of keys) {
    plain &&= UNRESERVED.test(key)
    for (const value of query[key] as string[]) {
      plain &&= UNRESERVED.test(value)
      room += 9 * (key.length + value.length) + 2
    }
  }
  return plain ? joined(query, keys) : written(query, keys, room)
}

function joined (query: QueryDict, keys: readonly string[]): QueryTemplate {
  const parts = { beforeLimit: '', between: '', afterOffset: '' }
  for (const key of keys) {
    const side = sideOf(key)
    for (const value of query[key] as string[]) {
      if (side === 0) parts.beforeLimit += `${key}=${value}&`
      else if (side === 1) parts.between += `&${key}=${value}`
      else parts.afterOffset += `&${key}=${value}`
    }
  }
  return parts
}

/** Keys sorted put each part's fields together. */
function written (query: QueryDict, keys: readonly string[], room: number): QueryTemplate {
  const out = scratchOf(room)
  let n = 0
  let betweenFrom = -1
  let afterFrom = -1
  for (const key of keys) {
    const side = sideOf(key)
    if (side === 1 && betweenFrom < 0) betweenFrom = n
    if (side === 2 && afterFrom < 0) afterFrom = n
    for (const value of query[key] as string[]) {
      if (side !== 0) out[n++] = 0x26
      n = quotePlusInto(key, out, n)
      out[n++] = 0x3d
      n = quotePlusInto(value, out, n)
      if (side === 0) out[n++] = 0x26
    }
  }
  if (afterFrom < 0) afterFrom = n
  if (betweenFrom < 0) betweenFrom = afterFrom
  const part = (from: number, to: number): string => from === to ? '' : out.toString('latin1', from, to)
  return { beforeLimit: part(0, betweenFrom), between: part(betweenFrom, afterFrom), afterOffset: part(afterFrom, n) }
}

function link (
  url: string, { beforeLimit, between, afterOffset }: QueryTemplate, limit: number, offset: string | null
): string {
  return `${url}?${beforeLimit}limit=${limit}${between}${offset === null ? '' : `&offset=${offset}`}${afterOffset}`
}

/** `url`: absolute, without its query string. */
export function pageLinks (
  url: string, query: QueryDict, { count, limit, offset, offsetDigits }: PagePosition
): PageLinks {
  const hasNext = offset + limit < count
  const hasPrevious = offset > 0
  if (!hasNext && !hasPrevious) return { next: null, previous: null }
  const parts = template(query)
  let previous: string | null = null
  if (hasPrevious) {
    if (offset - limit <= 0) {
      previous = link(url, parts, limit, null)
    } else {
      previous = link(url, parts, limit, Number.isSafeInteger(offset)
        ? String(offset - limit)
        : (BigInt(offsetDigits) - BigInt(limit)).toString())
    }
  }
  return { next: hasNext ? link(url, parts, limit, String(offset + limit)) : null, previous }
}
