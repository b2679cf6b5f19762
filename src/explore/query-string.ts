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

/** Reused for every field and link: a request's text is turned into bytes here, never into an array of numbers. */
let scratch = Buffer.allocUnsafeSlow(4096)

export function scratchOf (bytes: number): Buffer {
  if (scratch.length < bytes) scratch = Buffer.allocUnsafeSlow(Math.max(bytes, 2 * scratch.length))
  return scratch
}

/**
 * Python's `unquote(s.replace('+', ' '))`: each ASCII run, escapes included, decoded as UTF-8, other characters as
 * they are. Decoded in one call: a character's own UTF-8 bytes begin with a lead byte, which ends a broken sequence
 * before it as the run's end would, so the runs and the characters between them decode as they would apart.
 */
export function unquotePlus (text: string): string {
  if (text.indexOf('%') === -1) return text.indexOf('+') === -1 ? text : text.replace(/\+/g, ' ')
  // Three bytes at most for each UTF-16 unit.
  const bytes = scratchOf(3 * text.length)
  let out = ''
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) {
      const high = code === 0x25 && i + 2 < text.length ? hexValue(text.charCodeAt(i + 1)) : -1
      const low = high >= 0 ? hexValue(text.charCodeAt(i + 2)) : -1
      if (low >= 0) {
        bytes[n++] = high * 16 + low
        i += 2
      } else {
        bytes[n++] = code === 0x2b ? 0x20 : code
      }
    } else if (code < 0x800) {
      bytes[n++] = 0xc0 | (code >> 6)
      bytes[n++] = 0x80 | (code & 0x3f)
    } else if (code < 0xd800 || code > 0xdfff) {
      bytes[n++] = 0xe0 | (code >> 12)
      bytes[n++] = 0x80 | ((code >> 6) & 0x3f)
      bytes[n++] = 0x80 | (code & 0x3f)
    } else {
      const next = text.charCodeAt(i + 1)
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00)
        bytes[n++] = 0xf0 | (point >> 18)
        bytes[n++] = 0x80 | ((point >> 12) & 0x3f)
        bytes[n++] = 0x80 | ((point >> 6) & 0x3f)
        bytes[n++] = 0x80 | (point & 0x3f)
        i++
      } else {
        // A lone surrogate has no UTF-8: kept as it is, between the runs decoded apart.
        out += utf8.decode(bytes.subarray(0, n)) + text[i]
        n = 0
      }
    }
  }
  return out + utf8.decode(bytes.subarray(0, n))
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

/** What quote_plus leaves as it is. */
export const UNRESERVED = /^[A-Za-z0-9_.~-]*$/

/** `%XX` of each byte, or the byte itself where quote_plus keeps it (0: written as `%XX`). */
const KEPT = new Uint8Array(256)
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~') KEPT[char.charCodeAt(0)] = 1
const HEX = Buffer.from('0123456789ABCDEF')

function quoteByte (byte: number, out: Buffer, at: number): number {
  if (KEPT[byte] === 1) {
    out[at] = byte
    return at + 1
  }
  if (byte === 0x20) {
    out[at] = 0x2b
    return at + 1
  }
  out[at] = 0x25
  out[at + 1] = HEX[byte >> 4] as number
  out[at + 2] = HEX[byte & 0x0f] as number
  return at + 3
}

/**
 * Python's `quote_plus(s)` written into `out` from `at` (room for 9 bytes a UTF-16 unit), the text's UTF-8 as
 * Buffer.from makes it (a lone surrogate as U+FFFD); returns where it ends.
 */
export function quotePlusInto (text: string, out: Buffer, at: number): number {
  let n = at
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i)
    if (code < 0x80) {
      n = quoteByte(code, out, n)
      continue
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1)
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00)
        n = quoteByte(0xf0 | (point >> 18), out, n)
        n = quoteByte(0x80 | ((point >> 12) & 0x3f), out, n)
        n = quoteByte(0x80 | ((point >> 6) & 0x3f), out, n)
        n = quoteByte(0x80 | (point & 0x3f), out, n)
        i++
        continue
      }
      code = 0xfffd
    }
    if (code < 0x800) {
      n = quoteByte(0xc0 | (code >> 6), out, n)
    } else {
      n = quoteByte(0xe0 | (code >> 12), out, n)
      n = quoteByte(0x80 | ((code >> 6) & 0x3f), out, n)
    }
    n = quoteByte(0x80 | (code & 0x3f), out, n)
  }
  return n
}

/** Python's `quote_plus(s)`. */
export function quotePlus (text: string): string {
  if (UNRESERVED.test(text)) return text
  const out = scratchOf(9 * text.length)
  return out.toString('latin1', 0, quotePlusInto(text, out, 0))
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
