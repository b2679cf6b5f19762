// JSON text for the loader: a byte order mark, and JSON.parse's errors as places an editor can jump to.
import { positionAfter, type TextPosition } from './text-position.js'

/** Notepad among others writes one; JSON.parse rejects it. */
export function startsWithBom (bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
}

/** `index`: UTF-16, if V8 says. */
function syntaxError (error: Error): { what: string, index: number | null } {
  const message = error.message.replace(/^JSON\.parse: /, '')
  const position = /at position (\d+)/.exec(message)
  if (position === null) {
    return { what: /Unexpected end of JSON input/.test(message) ? 'the text ends too early' : message, index: null }
  }
  const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/,? ?"[\s\S]*" is not valid JSON$/, '')
  return { what, index: Number(position[1]) }
}

export function describeLineSyntaxError (error: Error): string {
  const { what, index } = syntaxError(error)
  if (index === null) return what === 'the text ends too early' ? 'the line ends too early' : what
  return `${what} at column ${index + 1}`
}

/** The same on every Node (Node 20's "Unexpected token" names no position); error path only (ADR 021). */
export function findSyntaxError (text: string): { index: number, what: string } | null {
  let i = 0
  const n = text.length
  const space = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++
  }
  const fail = (what: string) => ({ index: i, what })
  const open: string[] = []
  let value = true
  let key = false
  for (;;) {
    space()
    if (i >= n) return open.length === 0 && !value ? null : fail('the text ends too early')
    if (open.length === 0 && !value) return fail(`unexpected ${JSON.stringify(text[i])} after the value`)
    const c = text[i] as string
    if (value) {
      if (key && c !== '"') return fail(`expected a key in quotes, found ${JSON.stringify(c)}`)
      if (c === '{' || c === '[') {
        open.push(c)
        i++
        space()
        if (text[i] === (c === '{' ? '}' : ']')) {
          open.pop()
          i++
          value = false
          continue
        }
        key = c === '{'
        continue
      }
      if (c === '"') {
        const end = stringEnd(text, i)
        if (end < 0) return fail('a string that does not end, or holds a raw control character or a bad escape')
        i = end
        if (key) {
          space()
          if (text[i] !== ':') return fail('expected \':\' after the key')
          i++
          key = false
          continue
        }
        value = false
        continue
      }
      const scalar = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400))
      if (scalar === null) return fail(`unexpected ${JSON.stringify(c)} where a value belongs`)
      i += scalar[0].length
      value = false
      continue
    }
    const top = open[open.length - 1]
    if (c === ',') {
      i++
      value = true
      key = top === '{'
      space()
      if (text[i] === '}' || text[i] === ']') return fail(`a trailing comma before ${JSON.stringify(text[i])}`)
      continue
    }
    if ((c === '}' && top === '{') || (c === ']' && top === '[')) {
      open.pop()
      i++
      continue
    }
    return fail(`expected ',' or ${JSON.stringify(top === '{' ? '}' : ']')}, found ${JSON.stringify(c)}`)
  }
}

/** -1: not a valid JSON string. */
function stringEnd (text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) return i + 1
    if (c < 0x20) return -1
    if (c === 0x5c) {
      const e = text[i + 1]
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return -1
        i += 5
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
        i++
      } else {
        return -1
      }
    }
  }
  return -1
}

export function locateSyntaxError (
  json: string, error: unknown, start: TextPosition
): { what: string, position: TextPosition } {
  const found = findSyntaxError(json) ?? { index: 0, what: syntaxError(error as Error).what }
  return { what: found.what, position: positionAfter(start, Buffer.from(json.slice(0, found.index))) }
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * The deepest value on the pointer's way that is there (a missing field's object); `depth` 0: the whole value.
 * Error path only, so no item's places are kept while it parses.
 */
export function findValue (bytes: Uint8Array, pointer: string): { offset: number, depth: number } {
  const tokens = pointer === '' ? [] : pointer.split('/').slice(1).map(t => t.replace(/~1/g, '/').replace(/~0/g, '~'))
  let at = skipSpace(bytes, 0)
  let depth = 0
  for (const token of tokens) {
    const open = bytes[at]
    const found = open === OPEN_BRACE
      ? memberValue(bytes, at, token)
      : open === OPEN_BRACKET ? elementValue(bytes, at, token) : -1
    if (found === -1) break
    at = found
    depth++
  }
  return { offset: at, depth }
}

/** Of a repeated key, the last (as JSON.parse). */
function memberValue (bytes: Uint8Array, open: number, key: string): number {
  let found = -1
  let i = skipSpace(bytes, open + 1)
  if (bytes[i] === CLOSE_BRACE) return -1
  while (i < bytes.length) {
    const keyEnd = skipString(bytes, i)
    const name = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + i, keyEnd - i).toString('utf8')) as string
    i = skipSpace(bytes, skipSpace(bytes, keyEnd) + 1)
    if (name === key) found = i
    i = skipSpace(bytes, skipValue(bytes, i))
    if (bytes[i] !== COMMA) break
    i = skipSpace(bytes, i + 1)
  }
  return found
}

function elementValue (bytes: Uint8Array, open: number, token: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token)) return -1
  const index = Number(token)
  let i = skipSpace(bytes, open + 1)
  if (bytes[i] === CLOSE_BRACKET) return -1
  for (let n = 0; i < bytes.length; n++) {
    if (n === index) return i
    i = skipSpace(bytes, skipValue(bytes, i))
    if (bytes[i] !== COMMA) break
    i = skipSpace(bytes, i + 1)
  }
  return -1
}

function skipSpace (bytes: Uint8Array, from: number): number {
  let i = from
  for (let c = bytes[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = bytes[++i]);
  return i
}

function skipValue (bytes: Uint8Array, from: number): number {
  const n = bytes.length
  const c = bytes[from]
  if (c === QUOTE) return skipString(bytes, from)
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let nesting = 0
    for (let i = from; i < n;) {
      const b = bytes[i] as number
      if (b === QUOTE) {
        i = skipString(bytes, i)
        continue
      }
      if (b === OPEN_BRACE || b === OPEN_BRACKET) nesting++
      else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && --nesting === 0) return i + 1
      i++
    }
    return n
  }
  let i = from
  for (let b = bytes[i]; b !== undefined && b !== COMMA && b !== CLOSE_BRACE && b !== CLOSE_BRACKET &&
    b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09; b = bytes[++i]);
  return i
}

function skipString (bytes: Uint8Array, from: number): number {
  for (let i = from + 1; i < bytes.length; i++) {
    const b = bytes[i]
    if (b === BACKSLASH) i++
    else if (b === QUOTE) return i + 1
  }
  return bytes.length
}
