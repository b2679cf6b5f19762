// `next` and `previous` as DRF's LimitOffsetPagination builds them; the query encoded once for both.
import { compareCodePoints, quotePlus, type QueryDict } from './query-string.js'

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
  return keys.some(key => SURROGATE.test(key)) ? keys.sort(compareCodePoints) : keys.sort()
}

const SURROGATE = /[\ud800-\udfff]/

function template (query: QueryDict): QueryTemplate {
  let beforeLimit = ''
  let between = ''
  let afterOffset = ''
  for (const key of sortedKeys(query)) {
    const name = quotePlus(key)
    const side = compareCodePoints(key, 'limit') < 0 ? 0 : compareCodePoints(key, 'offset') < 0 ? 1 : 2
    for (const value of query[key] as string[]) {
      const field = `${name}=${quotePlus(value)}`
      if (side === 0) beforeLimit += `${field}&`
      else if (side === 1) between += `&${field}`
      else afterOffset += `&${field}`
    }
  }
  return { beforeLimit, between, afterOffset }
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
