// Strong ETags from what a page's bytes depend on, never a hash of the body; If-None-Match → 304.
import { trimmedFrom, trimmedTo } from './header-text.js'

/** FNV-1a, 32 bits: cheap, and collisions only matter between representations of one URL. */
function fnv1a (text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

export function entityTag (snapshotVersion: string, origin: string, url: string, indent: number | null): string {
  return `"${snapshotVersion}-${fnv1a(`${origin}\n${url}\n${indent ?? ''}`).toString(36)}"`
}

/** RFC 9110 §13.1.2: weak comparison. The list is walked in place, each tag trimmed as trim() would (ADR 037). */
export function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  for (let from = 0; ;) {
    const comma = ifNoneMatch.indexOf(',', from)
    const start = trimmedFrom(ifNoneMatch, from, comma < 0 ? ifNoneMatch.length : comma)
    const length = trimmedTo(ifNoneMatch, start, comma < 0 ? ifNoneMatch.length : comma) - start
    if ((length === 1 && ifNoneMatch.charCodeAt(start) === 0x2a) ||
        (length === etag.length && ifNoneMatch.startsWith(etag, start)) ||
        (length === etag.length + 2 && ifNoneMatch.startsWith('W/', start) && ifNoneMatch.startsWith(etag, start + 2))) {
      return true
    }
    if (comma < 0) return false
    from = comma + 1
  }
}
