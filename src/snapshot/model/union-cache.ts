// Unions of several companies' lists kept for the pages that follow: one cache per thread for every listing it
// serves, bounded in bytes, least recently used out first (ADR 037).
import type { Overlay } from './overlay.js'

/** Per thread, a quarter of the page cache's (16 MiB with PAGE_CACHE_MB's 64): PAGE_CACHE_MB=0 keeps none either. */
export function unionCacheBytes (pageCacheBytes: number): number {
  return Math.floor(pageCacheBytes / 4)
}

/** A union's Overlay and its arrays' objects, its key's string and its Map entry, beside the arrays' bytes. */
const UNION_ENTRY_BYTES = 512

/** V8 hashes a longer string by its length alone (String::kMaxHashCalcLength): such keys would share one bucket. */
export const V8_HASHED_LENGTH = 16_383

function bytesOf (key: string, union: Overlay): number {
  const { base, removed, added, addedAt, addedPlace } = union
  return (base?.byteLength ?? 0) + removed.byteLength + added.byteLength + addedAt.byteLength + addedPlace.byteLength +
    key.length + UNION_ENTRY_BYTES
}

export class UnionCache {
  private readonly unions = new Map<string, { union: Overlay, bytes: number }>()
  private held = 0

  constructor (private maxBytes: number) {}

  /** The thread's app sizes it (public-app.ts); what no longer fits goes. */
  resize (maxBytes: number): void {
    this.maxBytes = maxBytes
    this.evictTo(maxBytes)
  }

  get (key: string): Overlay | undefined {
    const entry = this.unions.get(key)
    if (entry === undefined) return undefined
    // Least recently used goes first.
    this.unions.delete(key)
    this.unions.set(key, entry)
    return entry.union
  }

  /** Unless it could never fit. */
  keep (key: string, union: Overlay): void {
    const bytes = bytesOf(key, union)
    if (bytes > this.maxBytes || key.length > V8_HASHED_LENGTH || this.unions.has(key)) return
    this.evictTo(this.maxBytes - bytes)
    this.unions.set(key, { union, bytes })
    this.held += bytes
  }

  private evictTo (bytes: number): void {
    while (this.held > bytes) {
      const [oldest, entry] = this.unions.entries().next().value as [string, { bytes: number }]
      this.unions.delete(oldest)
      this.held -= entry.bytes
    }
  }

  get size (): number {
    return this.unions.size
  }

  /** Never more than the cache's bytes. */
  get bytes (): number {
    return this.held
  }
}

/**
 * This thread's, sized by its app (none until then): unions of retired versions' listings wait for their turn to go,
 * holding only their own arrays.
 */
export const unionCache = new UnionCache(0)
