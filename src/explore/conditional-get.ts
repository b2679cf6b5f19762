// Strong ETags from what a page's bytes depend on, never a hash of the body; If-None-Match → 304.

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

/** RFC 9110 §13.1.2: weak comparison. */
export function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim()
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true
  }
  return false
}
