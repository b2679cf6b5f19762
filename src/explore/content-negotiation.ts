// DRF's content negotiation with JSONRenderer alone; quality values ignored, as DRF ignores them.
import { notAcceptable, notFound } from '../errors.js'
import { pythonInt } from './python-int.js'

interface MediaType {
  main: string
  sub: string
  params: Map<string, string>
  precedence: number
}

/** Django's `parse_header`. */
function parseMediaType (text: string): MediaType {
  const parts: string[] = []
  let rest = text
  for (;;) {
    let end = rest.indexOf(';')
    // A `;` inside a quoted value does not end the parameter.
    while (end > 0 && (rest.slice(0, end).split('"').length - 1) % 2 === 1) end = rest.indexOf(';', end + 1)
    if (end < 0) {
      parts.push(rest.trim())
      break
    }
    parts.push(rest.slice(0, end).trim())
    rest = rest.slice(end + 1)
  }
  const full = (parts.shift() as string).toLowerCase()
  const params = new Map<string, string>()
  for (const part of parts) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    let value = part.slice(eq + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\\\/g, '\\').replace(/\\"/g, '"')
    }
    params.set(part.slice(0, eq).trim().toLowerCase(), value)
  }
  const slash = full.indexOf('/')
  const main = slash < 0 ? full : full.slice(0, slash)
  const sub = slash < 0 ? '' : full.slice(slash + 1)
  const onlyQ = params.size === 0 || (params.size === 1 && params.has('q'))
  const precedence = main === '*' ? 0 : sub === '*' ? 1 : onlyQ ? 2 : 3
  return { main, sub, params, precedence }
}

interface Negotiation {
  /** 1–8, or null for DRF's compact output. */
  indent: number | null
}

const COMPACT: Negotiation = { indent: null }

/** Throws DRF's 404 or 406. */
export function negotiate (accept: string | undefined, format: string | undefined): Negotiation {
  if (format !== undefined && format !== '' && format !== 'json') throw notFound()
  // Without the header DRF assumes */*; an empty header is a list of one empty type, which matches nothing.
  if (accept === undefined || accept === '*/*' || accept === 'application/json') return COMPACT
  let best: MediaType | null = null
  for (const token of accept.split(',')) {
    const type = parseMediaType(token.trim())
    const matches = (type.main === '*' || type.main === 'application') && (type.sub === '*' || type.sub === 'json')
    if (matches && (best === null || type.precedence > best.precedence)) best = type
  }
  if (best === null) throw notAcceptable()
  // Whichever media type DRF keeps, `indent` counts.
  const indentText = best.params.get('indent')
  if (indentText === undefined) return COMPACT
  // DRF: a ValueError of `int(params['indent'])` means compact.
  const indent = pythonInt(indentText)
  if (indent === null) return COMPACT
  const clamped = Math.max(Math.min(indent.value, 8), 0)
  return clamped === 0 ? COMPACT : { indent: clamped }
}
