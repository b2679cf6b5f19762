// The parsers of option values a schema's bounds cannot describe: a source's URL and headers, a token, a
// base URL, origins and host lists, a delay's forms (each declared with its option in options.ts).
import { Type, type Static } from '@sinclair/typebox'
import { SecretUrl } from '../secret-url.js'

/** A lognormal's tail is cut there too. */
export const MAX_DELAY_MS = 600_000
const DelayMs = Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })

export const DelaySchema = Type.Union([
  Type.Object({ kind: Type.Literal('fixed'), ms: DelayMs }),
  Type.Object({ kind: Type.Literal('uniform'), min: DelayMs, max: DelayMs }),
  Type.Object({ kind: Type.Literal('lognormal'), median: Type.Integer({ minimum: 1, maximum: MAX_DELAY_MS }) })
])
export type DelaySpec = Static<typeof DelaySchema>

export function snapshotUrl (text: string): SecretUrl {
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    throw new Error('is not a URL')
  }
  if (!['http:', 'https:', 's3:'].includes(url.protocol)) {
    throw new Error(`${url.protocol} is not a scheme the service follows`)
  }
  if (!/\.(json|jsonl|ndjson)$/i.test(url.pathname)) {
    throw new Error('must name a .json, .jsonl or .ndjson object (the format follows the name)')
  }
  if (url.protocol === 's3:' && (url.hostname === '' || url.pathname.length <= 1)) {
    throw new Error('an S3 source is s3://bucket/key')
  }
  return new SecretUrl(url.href)
}

/** RFC 9110's token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Set by the replica's own requests or by HTTP's framing. */
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect',
  'accept-encoding', 'range', 'if-none-match', 'if-modified-since'
])

/** No message repeats a value, nor a name that is not one (it may be a value missing its colon): secrets. */
export function httpHeaders (text: string): Record<string, string> | null {
  const value = text.trim()
  if (value === '') return null
  let pairs: Array<[string, unknown, string]>
  if (value.startsWith('{')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(value)
    } catch {
      throw new Error('is not a JSON object')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Error('is not a JSON object')
    }
    pairs = Object.entries(parsed).map(([name, v], i) => [name, v, `the JSON object's name ${i + 1}`])
  } else {
    pairs = value.split(/\r?\n/).flatMap((line, i): Array<[string, unknown, string]> => {
      if (line.trim() === '') return []
      const colon = line.indexOf(':')
      if (colon < 0) throw new Error(`line ${i + 1} is not \`Name: value\``)
      return [[line.slice(0, colon).trim(), line.slice(colon + 1).trim(), `the name on line ${i + 1}`]]
    })
  }
  const headers: Record<string, string> = {}
  const seen = new Set<string>()
  for (const [name, header, where] of pairs) {
    if (!HEADER_NAME.test(name)) {
      throw new Error(`${where} is not a header name (letters, digits and !#$%&'*+-.^_\`|~)`)
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new Error(`${name} is set by the replica or by HTTP itself: it cannot be given`)
    }
    if (seen.has(name.toLowerCase())) throw new Error(`${name} is given twice: give each header once`)
    seen.add(name.toLowerCase())
    if (typeof header !== 'string') throw new Error(`the value of ${name} must be a string`)
    if (/[\r\n]/.test(header)) throw new Error(`the value of ${name} must be one line (no CR or LF)`)
    if (!/^[\x20-\x7e\t]*$/.test(header)) {
      throw new Error(`the value of ${name} must be printable ASCII (percent- or base64-encode anything else)`)
    }
    if (header.trim() === '') throw new Error(`${name} has no value`)
    headers[name] = header.trim()
  }
  return headers
}

/** OPS_TOKEN's shortest. */
export const OPS_TOKEN_LENGTH = 16

/** A placeholder's words and marks: no hex token holds one, a base64 one by a chance of about 1 in 7 million. */
const PLACEHOLDER = /replace|change|example|placeholder|secret|insert|your.?token|xxxxxx|[<>…`]|\$[({]/i

/** Copied from a guide, a token would be known to anyone who read it. */
export function opsToken (text: string): string | null {
  const token = text.trim()
  if (token === '') return null
  if (token.length < OPS_TOKEN_LENGTH) throw new Error(`must be at least ${OPS_TOKEN_LENGTH} characters`)
  if (PLACEHOLDER.test(token) || /^(.)\1*$/s.test(token)) {
    throw new Error('is a placeholder, not a token: make one with `openssl rand -hex 32`')
  }
  return token
}

export function baseUrl (text: string): string | null {
  const value = text.trim()
  if (value === '') return null
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error('must be an absolute http(s) URL such as https://news.example.com')
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' ||
      url.username !== '' || url.password !== '') {
    throw new Error('must be an absolute http(s) URL with no query, fragment or credentials')
  }
  // Links are built as base + /{lang}/api/…: keep a path prefix, drop the trailing slash.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`
}

export function corsOrigin (text: string): '*' | string[] | false {
  const value = text.trim()
  if (value === '*') return '*'
  if (['', 'false', 'off', 'none'].includes(value.toLowerCase())) return false
  const origins = value.split(',').map(o => o.trim()).filter(o => o !== '')
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new Error(`"${origin}" is not an origin such as https://app.example.com`)
    }
  }
  return origins
}

export function allowedHosts (text: string): string[] | null {
  const hosts = text.split(',').map(h => h.trim().toLowerCase()).filter(h => h !== '')
  if (hosts.length === 0) return null
  for (const host of hosts) {
    if (host !== '*' && !/^\.?[a-z0-9.-]+$|^\[[a-f0-9:.]+\]$/.test(host)) {
      throw new Error(`"${host}" is not a host name, a .domain or *`)
    }
  }
  return hosts
}

export function delay (text: string): DelaySpec | null {
  const value = text.trim()
  const rule = `must be milliseconds (200), a range (100-400) or a median (~150), from 0 to ${MAX_DELAY_MS}`
  const ms = (digits: string): number => {
    const number = Number(digits)
    if (number > MAX_DELAY_MS) throw new Error(rule)
    return number
  }
  let match: RegExpExecArray | null
  if (value === '') return null
  if ((match = /^([0-9]+)$/.exec(value)) !== null) {
    const fixed = ms(match[1] as string)
    return fixed === 0 ? null : { kind: 'fixed', ms: fixed }
  }
  if ((match = /^([0-9]+)\s*-\s*([0-9]+)$/.exec(value)) !== null) {
    const [min, max] = [ms(match[1] as string), ms(match[2] as string)]
    if (min > max) {
      throw new Error(
        `a range goes from the shorter delay to the longer (${max}-${min}), ${rule.replace('must be ', 'and must be ')}`
      )
    }
    if (max === 0) return null
    return min === max ? { kind: 'fixed', ms: min } : { kind: 'uniform', min, max }
  }
  if ((match = /^~\s*([0-9]+)$/.exec(value)) !== null) {
    const median = ms(match[1] as string)
    if (median === 0) throw new Error(`a median must be above 0; ${rule}`)
    return { kind: 'lognormal', median }
  }
  throw new Error(rule)
}
