// The explore parameters read by DRF's rules (QueryDict, LimitOffsetPagination): `companies` repeatable, blanks
// ignored, anything but digits refused; `limit` and `offset` never refused, only defaulted.
import { companiesNotInteger } from '../errors.js'
import { pythonInt } from './python-int.js'
import type { QueryDict } from './query-string.js'

const DEFAULT_LIMIT = 10

const DIGITS = /^[0-9]+$/

/** Digits → number, or Infinity past 2^53 (such a count or offset is beyond any snapshot). */
function digitsValue (digits: string): number {
  const value = Number(digits)
  return Number.isSafeInteger(value) ? value : Infinity
}

/** The last value, as Django's `QueryDict.__getitem__` gives it. */
export function lastValue (query: QueryDict, key: string): string | undefined {
  const values = query[key]
  return values === undefined ? undefined : values[values.length - 1]
}

/**
 * Company ids to filter by, or null for no filter. Throws the DRF 400 for a value that is not all
 * digits. Ids past 2^53 are kept as Infinity: valid, linked to nothing.
 */
export function readCompanies (query: QueryDict): number[] | null {
  const values = query.companies
  if (values === undefined) return null
  let ids: number[] | null = null
  for (const value of values) {
    if (value === '') continue
    if (!DIGITS.test(value)) throw companiesNotInteger()
    ;(ids ??= []).push(digitsValue(value))
  }
  return ids
}

/**
 * `limit`: DRF's `_positive_int(value, strict=True, cutoff=max_limit)`: Python's int() of the last
 * value, > 0, else the default; above `maxLimit`, `maxLimit`.
 */
export function readLimit (query: QueryDict, maxLimit: number): number {
  const value = lastValue(query, 'limit')
  const limit = value === undefined ? null : pythonInt(value)
  if (limit === null || limit.value <= 0) return DEFAULT_LIMIT
  return Math.min(limit.value, maxLimit)
}

const NO_OFFSET = { offset: 0, digits: '0' }

/**
 * `offset`: DRF's `_positive_int(value)`: Python's int() of the last value, >= 0, else 0. Kept as
 * Python's digits too: an offset past 2^53 still has to come back exactly in a `previous` link.
 */
export function readOffset (query: QueryDict): { offset: number, digits: string } {
  const value = lastValue(query, 'offset')
  const offset = value === undefined ? null : pythonInt(value)
  if (offset === null || offset.value < 0) return NO_OFFSET
  return { offset: offset.value, digits: offset.digits }
}

/** What a page is made of, read by the rules above; throws the DRF 400 for a bad `companies`. */
interface PageParams {
  companies: number[] | null
  limit: number
  offset: number
  /** The offset exactly, as Python writes it (see readOffset). */
  offsetDigits: string
}

export function readPageParams (query: QueryDict, maxLimit: number): PageParams {
  const companies = readCompanies(query)
  const limit = readLimit(query, maxLimit)
  const { offset, digits } = readOffset(query)
  return { companies, limit, offset, offsetDigits: digits }
}
