// Unions of several companies' lists kept for the pages that follow: one cache per thread for every listing it
// serves, bounded in bytes, least recently used out first (ADR 037).
import type { Overlay } from './overlay.js'

/** Per thread; the memory budget reserves it (memory-budget.ts). */
export const UNION_CACHE_BYTES = 16 * 1024 * 1024

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

  constructor (private readonly maxBytes: number) {}

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
    while (this.held + bytes > this.maxBytes) {
      const [oldest, entry] = this.unions.entries().next().value as [string, { bytes: number }]
      this.unions.delete(oldest)
      this.held -= entry.bytes
    }
    this.unions.set(key, { union, bytes })
    this.held += bytes
  }

  get size (): number {
    return this.unions.size
  }

  /** Never more than the cache's bytes. */
  get bytes (): number {
    return this.held
  }
}

/** This thread's: unions of retired versions' listings wait for their turn to go, holding only their own arrays. */
export const unionCache = new UnionCache(UNION_CACHE_BYTES)
