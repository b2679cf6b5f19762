// The filters of GET /-/requests and /-/requests.har: read from the query (each bad one a 400 that says why) and
// applied to the journal's entries.
import { journalFilterInvalid } from '../errors.js'
import { parseRequestQuery, TOO_MANY_FIELDS, type QueryDict } from '../explore/query-string.js'
import type { JournalEntry } from '../schemas/request-journal.js'

const NAMES = ['path', 'method', 'status', 'query', 'since', 'limit']

export interface JournalFilter {
  path: string | null
  method: string | null
  /** An exact status, a class (`5xx`: 5), or `none` (no answer). */
  status: { exact: number } | { hundreds: number } | 'none' | null
  /** Each field, with the value it must have among its values (null: present with any). */
  query: Array<[string, string | null]>
  /** Epoch milliseconds. */
  since: number | null
  limit: number | null
}

/** The last value of each, as Django's QueryDict.get; `query` all of its values. */
export function readFilter (query: QueryDict): JournalFilter {
  const unknown = Object.keys(query).filter(name => !NAMES.includes(name))
  if (unknown.length > 0) {
    throw journalFilterInvalid(`Unknown filter ${JSON.stringify(unknown[0])}: the filters are ${NAMES.join(', ')}.`)
  }
  const last = (name: string): string | null => {
    const value = query[name]?.at(-1)?.trim()
    return value === undefined || value === '' ? null : value
  }
  return {
    path: last('path'),
    method: last('method')?.toUpperCase() ?? null,
    status: statusOf(last('status')),
    query: (query.query ?? []).filter(field => field !== '').map(field => {
      const eq = field.indexOf('=')
      return eq < 0 ? [field, null] : [field.slice(0, eq), field.slice(eq + 1)]
    }),
    since: sinceOf(last('since')),
    limit: limitOf(last('limit'))
  }
}

function statusOf (text: string | null): JournalFilter['status'] {
  if (text === null) return null
  if (text.toLowerCase() === 'none') return 'none'
  if (/^[1-5][0-9]{2}$/.test(text)) return { exact: Number(text) }
  if (/^[1-5]xx$/i.test(text)) return { hundreds: Number(text[0]) }
  throw journalFilterInvalid(`status=${JSON.stringify(text)}: give a status (503), a class (5xx) or none.`)
}

function sinceOf (text: string | null): number | null {
  if (text === null) return null
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(at)) {
    throw journalFilterInvalid(`since=${JSON.stringify(text)}: give an instant in ISO-8601 (2026-11-30T10:00:00Z).`)
  }
  return at
}

function limitOf (text: string | null): number | null {
  if (text === null) return null
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) === 0) {
    throw journalFilterInvalid(`limit=${JSON.stringify(text)}: give a whole number above 0.`)
  }
  return Number(text)
}

/** Whether `entry` passes every filter. */
export function passes (entry: JournalEntry, filter: JournalFilter): boolean {
  const { url } = entry
  const mark = url?.indexOf('?') ?? -1
  if (filter.path !== null && (url === null || (mark < 0 ? url : url.slice(0, mark)) !== filter.path)) return false
  if (filter.method !== null && entry.method !== filter.method) return false
  if (!statusPasses(entry.status, filter.status)) return false
  if (filter.since !== null && Date.parse(entry.at) < filter.since) return false
  if (filter.query.length === 0) return true
  const fields = url === null || mark < 0 ? {} : parseRequestQuery(url.slice(mark + 1))
  if (fields === TOO_MANY_FIELDS) return false
  return filter.query.every(([name, value]) =>
    value === null ? fields[name] !== undefined : fields[name]?.includes(value) === true)
}

function statusPasses (status: number | null, wanted: JournalFilter['status']): boolean {
  if (wanted === null) return true
  if (wanted === 'none') return status === null
  if (status === null) return false
  return 'exact' in wanted ? status === wanted.exact : Math.floor(status / 100) === wanted.hundreds
}

/** The entries that pass, newest first, at most `limit`. */
export function filtered (entries: readonly JournalEntry[], filter: JournalFilter): JournalEntry[] {
  const passed = entries.filter(entry => passes(entry, filter))
  return filter.limit === null ? passed : passed.slice(0, filter.limit)
}
