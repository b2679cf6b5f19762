// What the request journal keeps of a request's target and header values (ADR 041): secrets redacted where they enter
// it, every value cut to its bound.
import { unquotePlus } from '../explore/query-string.js'

export const URL_CHARS = 1024
export const HEADER_CHARS = 256
export const REDACTED = '[redacted]'

/**
 * A query field whose name, decoded as Django decodes it, holds one of these (in any case) may carry a secret: its
 * value is never kept. The API's own fields (companies, limit, offset, format) and the steering ones hold none.
 */
export const SECRET_FIELD = /token|secret|passw|pwd|auth|key|sig|session|credential|jwt|bearer|cookie/i
/** The API's own fields and the steering ones, as sent: a query of these alone is kept whole without a look. */
const OWN_FIELDS = ['companies=', 'limit=', 'offset=', 'format=', '__delay=', '__status=', '__code=']

/** Whether every field of the query from `from` is one of OWN_FIELDS: a scan that makes no string. */
function ownFieldsOnly (url: string, from: number): boolean {
  for (let at = from; at < url.length;) {
    let own = false
    for (let i = 0; i < OWN_FIELDS.length && !own; i++) own = url.startsWith(OWN_FIELDS[i] as string, at)
    if (!own) return false
    const next = url.indexOf('&', at)
    if (next < 0) return true
    at = next + 1
  }
  return true
}

/** `target` without user info (an absolute-form target) nor the values of query fields named like a secret. */
export function redactTarget (target: string): string {
  let url = target
  // GET http://user:password@host/… : the authority's user info.
  if (url.charCodeAt(0) !== 0x2f) url = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, `$1${REDACTED}@`)
  const mark = url.indexOf('?')
  if (mark < 0 || ownFieldsOnly(url, mark + 1)) return url
  const fields = url.slice(mark + 1).split('&')
  let redacted = false
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as string
    const eq = field.indexOf('=')
    if (eq >= 0 && SECRET_FIELD.test(unquotePlus(field.slice(0, eq)))) {
      fields[i] = `${field.slice(0, eq + 1)}${REDACTED}`
      redacted = true
    }
  }
  return redacted ? `${url.slice(0, mark + 1)}${fields.join('&')}` : url
}

/**
 * `value` cut to `max` characters (never inside a surrogate pair), as a string of its own: a slice would keep the
 * whole value it was cut from alive.
 */
export function bounded (value: string, max: number): string {
  if (value.length <= max) return value
  const high = value.charCodeAt(max - 1)
  const end = high >= 0xd800 && high <= 0xdbff ? max - 1 : max
  return Buffer.from(value.slice(0, end), 'utf16le').toString('utf16le')
}
