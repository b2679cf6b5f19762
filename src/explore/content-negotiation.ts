// DRF's content negotiation with JSONRenderer alone; quality values ignored, as DRF ignores them. The header is
// walked once, nothing made per media type but the one chosen (ADR 037).
import { notAcceptable, notFound } from '../errors.js'
import { indexIn, trimmedFrom, trimmedTo } from './header-text.js'
import { pythonInt } from './python-int.js'

/** `text[from, to)` equals `word` (ASCII, lower case) but for case: `toLowerCase` makes no ASCII letter of these. */
function sameWord (text: string, from: number, to: number, word: string): boolean {
  if (to - from !== word.length) return false
  for (let i = 0; i < word.length; i++) {
    if ((text.charCodeAt(from + i) | 0x20) !== word.charCodeAt(i)) return false
  }
  return true
}

function isStar (text: string, from: number, to: number): boolean {
  return to - from === 1 && text.charCodeAt(from) === 0x2a
}

/**
 * Django's `parse_header` as a walk: where the part of a media type that starts at `from` ends, at the first `;`
 * outside quotes (an odd count of `"` before it since `from`), or `to`.
 */
function partEnd (text: string, from: number, to: number): number {
  let quoted = false
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x22) quoted = !quoted
    else if (code === 0x3b && !quoted) return i
  }
  return to
}

/** A part's parameter name and value, each trimmed as Django's (here JavaScript's) strip; null without `=`. */
interface Parameter {
  nameFrom: number
  nameTo: number
  valueFrom: number
  valueTo: number
}

function parameterIn (text: string, from: number, to: number): Parameter | null {
  from = trimmedFrom(text, from, to)
  to = trimmedTo(text, from, to)
  const eq = indexIn(text, 0x3d, from, to)
  if (eq < 0) return null
  return { nameFrom: from, nameTo: trimmedTo(text, from, eq), valueFrom: trimmedFrom(text, eq + 1, to), valueTo: to }
}

/** DRF's `_MediaType.precedence` of the media type in `text[from, to)` (trimmed) if it admits JSON, else -1. */
function jsonPrecedence (text: string, from: number, to: number): number {
  const typeTo = partEnd(text, from, to)
  const end = trimmedTo(text, from, typeTo)
  const slash = indexIn(text, 0x2f, from, end)
  if (slash < 0) return -1
  const anyMain = isStar(text, from, slash)
  const anySub = isStar(text, slash + 1, end)
  if (!(anyMain || sameWord(text, from, slash, 'application')) || !(anySub || sameWord(text, slash + 1, end, 'json'))) {
    return -1
  }
  if (anyMain) return 0
  if (anySub) return 1
  // 2 if no parameter but `q` is named, else 3.
  for (let at = typeTo; at < to;) {
    const partTo = partEnd(text, at + 1, to)
    const parameter = parameterIn(text, at + 1, partTo)
    if (parameter !== null && !sameWord(text, parameter.nameFrom, parameter.nameTo, 'q')) return 3
    at = partTo
  }
  return 2
}

/** The last `indent` parameter's value, unquoted as Django does, or undefined. */
function indentOf (text: string, from: number, to: number): string | undefined {
  let found: Parameter | null = null
  for (let at = partEnd(text, from, to); at < to;) {
    const partTo = partEnd(text, at + 1, to)
    const parameter = parameterIn(text, at + 1, partTo)
    if (parameter !== null && sameWord(text, parameter.nameFrom, parameter.nameTo, 'indent')) found = parameter
    at = partTo
  }
  if (found === null) return undefined
  const { valueFrom, valueTo } = found
  if (valueTo - valueFrom >= 2 && text.charCodeAt(valueFrom) === 0x22 && text.charCodeAt(valueTo - 1) === 0x22) {
    return text.slice(valueFrom + 1, valueTo - 1).replace(/\\\\/g, '\\').replace(/\\"/g, '"')
  }
  return text.slice(valueFrom, valueTo)
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
  // DRF splits at every comma, quoted or not; the first media type of the highest precedence is kept.
  let best = -1
  let bestFrom = 0
  let bestTo = 0
  for (let from = 0; best < 3;) {
    const comma = accept.indexOf(',', from)
    const start = trimmedFrom(accept, from, comma < 0 ? accept.length : comma)
    const to = trimmedTo(accept, start, comma < 0 ? accept.length : comma)
    const precedence = jsonPrecedence(accept, start, to)
    if (precedence > best) {
      best = precedence
      bestFrom = start
      bestTo = to
    }
    if (comma < 0) break
    from = comma + 1
  }
  if (best < 0) throw notAcceptable()
  // Whichever media type DRF keeps, `indent` counts.
  const indentText = indentOf(accept, bestFrom, bestTo)
  if (indentText === undefined) return COMPACT
  // DRF: a ValueError of `int(params['indent'])` means compact.
  const indent = pythonInt(indentText)
  if (indent === null) return COMPACT
  const clamped = Math.max(Math.min(indent.value, 8), 0)
  return clamped === 0 ? COMPACT : { indent: clamped }
}
