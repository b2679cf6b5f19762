// Header values read in place, as the first ports read them with trim() and split(), without the strings those made
// (a request's cost stays linear in its bytes and small: ADR 037).

/** What `String.prototype.trim` removes. */
export function isTrimmed (code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d)
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 ||
    code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
}

/** `text.slice(from, to).trim()` as the bounds it would keep: `[start, end)`. */
export function trimmedFrom (text: string, from: number, to: number): number {
  while (from < to && isTrimmed(text.charCodeAt(from))) from++
  return from
}

export function trimmedTo (text: string, from: number, to: number): number {
  while (to > from && isTrimmed(text.charCodeAt(to - 1))) to--
  return to
}

/** `text.indexOf` of `code` within `[from, to)`, or -1: never past `to`, so no part is walked twice. */
export function indexIn (text: string, code: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === code) return i
  return -1
}
