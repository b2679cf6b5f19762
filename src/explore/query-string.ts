// Query strings read and written exactly as Django and DRF do: clients see any difference in links.

/** Django's DATA_UPLOAD_MAX_NUMBER_FIELDS. */
const MAX_FIELDS = 1000

/** Key → values in request order, no prototype. */
export type QueryDict = Record<string, string[]>

// Bad bytes become U+FFFD, as Python's errors='replace'; a BOM is a character to Python.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true })

function hexValue (code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  const lower = code | 0x20
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10
  return -1
}

/** Python's `unquote(s.replace('+', ' '))`. */
export function unquotePlus (text: string): string {
  const plus = text.indexOf('+')
  const percent = text.indexOf('%')
  if (percent === -1) return plus === -1 ? text : text.replace(/\+/g, ' ')
  let out = ''
  let bytes: number[] = []
  const flush = () => {
    if (bytes.length > 0) {
      out += utf8.decode(Uint8Array.from(bytes))
      bytes = []
    }
  }
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x25 && i + 2 < text.length && hexValue(text.charCodeAt(i + 1)) >= 0 &&
        hexValue(text.charCodeAt(i + 2)) >= 0) {
      bytes.push(hexValue(text.charCodeAt(i + 1)) * 16 + hexValue(text.charCodeAt(i + 2)))
      i += 2
    } else if (code < 0x80) {
      // Python decodes each ASCII run, escapes included, as one byte string.
      bytes.push(code === 0x2b ? 0x20 : code)
    } else {
      flush()
      out += text[i]
    }
  }
  flush()
  return out
}

/** As Django counts them: empty fields included. */
export function fieldCount (query: string): number {
  if (query === '') return 0
  let n = 1
  for (let i = query.indexOf('&'); i !== -1; i = query.indexOf('&', i + 1)) n++
  return n
}

export const TOO_MANY_FIELDS: QueryDict = Object.freeze(Object.create(null) as QueryDict)

export function parseRequestQuery (query: string): QueryDict {
  return fieldCount(query) > MAX_FIELDS ? TOO_MANY_FIELDS : parseQuery(query)
}

/** `parse_qsl(query, keep_blank_values=True)`; requests go through parseRequestQuery, which counts fields. */
export function parseQuery (query: string): QueryDict {
  const dict: QueryDict = Object.create(null)
  if (query === '') return dict
  for (const field of query.split('&')) {
    if (field === '') continue
    const eq = field.indexOf('=')
    const key = unquotePlus(eq === -1 ? field : field.slice(0, eq))
    const value = eq === -1 ? '' : unquotePlus(field.slice(eq + 1))
    const values = dict[key]
    if (values === undefined) dict[key] = [value]
    else values.push(value)
  }
  return dict
}

const UNRESERVED = /^[A-Za-z0-9_.~-]*$/

/** Python's `quote_plus(s)`. */
export function quotePlus (text: string): string {
  if (UNRESERVED.test(text)) return text
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    if ((byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a) ||
        byte === 0x5f || byte === 0x2e || byte === 0x2d || byte === 0x7e) {
      out += String.fromCharCode(byte)
    } else if (byte === 0x20) {
      out += '+'
    } else {
      out += byte < 0x10 ? `%0${byte.toString(16).toUpperCase()}` : `%${byte.toString(16).toUpperCase()}`
    }
  }
  return out
}

/** Python's order: by code point, not UTF-16 unit (they differ for surrogates against U+E000–U+FFFF). */
export function compareCodePoints (a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    const xSurrogate = x >= 0xd800 && x <= 0xdfff
    const ySurrogate = y >= 0xd800 && y <= 0xdfff
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1
    return x - y
  }
  return a.length - b.length
}
