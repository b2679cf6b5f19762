// The explore parameters read by DRF's rules (QueryDict, LimitOffsetPagination).
import { companiesNotInteger } from '../errors.js'
import { pythonInt } from './python-int.js'
import type { QueryDict } from './query-string.js'

const DEFAULT_LIMIT = 10

const DIGITS = /^[0-9]+$/

/** Infinity past 2^53: beyond any snapshot. */
function digitsValue (digits: string): number {
  const value = Number(digits)
  return Number.isSafeInteger(value) ? value : Infinity
}

/** As Django's `QueryDict.__getitem__`. */
export function lastValue (query: QueryDict, key: string): string | undefined {
  const values = query[key]
  return values === undefined ? undefined : values[values.length - 1]
}

/** Null for no filter; blanks ignored. Ids past 2^53 are Infinity: valid, linked to nothing. */
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

/** DRF's `_positive_int(value, strict=True, cutoff=max_limit)`: never refused, only defaulted. */
export function readLimit (query: QueryDict, maxLimit: number): number {
  const value = lastValue(query, 'limit')
  const limit = value === undefined ? null : pythonInt(value)
  if (limit === null || limit.value <= 0) return DEFAULT_LIMIT
  return Math.min(limit.value, maxLimit)
}

const NO_OFFSET = { offset: 0, digits: '0' }

/** DRF's `_positive_int(value)`; the digits too, as past 2^53 a `previous` link must still be exact. */
export function readOffset (query: QueryDict): { offset: number, digits: string } {
  const value = lastValue(query, 'offset')
  const offset = value === undefined ? null : pythonInt(value)
  if (offset === null || offset.value < 0) return NO_OFFSET
  return { offset: offset.value, digits: offset.digits }
}

interface PageParams {
  companies: number[] | null
  limit: number
  offset: number
  offsetDigits: string
}

export function readPageParams (query: QueryDict, maxLimit: number): PageParams {
  const companies = readCompanies(query)
  const limit = readLimit(query, maxLimit)
  const { offset, digits } = readOffset(query)
  return { companies, limit, offset, offsetDigits: digits }
}
