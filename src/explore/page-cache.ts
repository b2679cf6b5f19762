// Whole answers kept per snapshot model: a repeated request costs a lookup and a write, like a static
// file. The cache belongs to the model it was filled from, so a new snapshot starts with an empty one
// and the old one goes with the old model: nothing stale can be served, nothing needs invalidating.
import type { SnapshotModel } from '../snapshot/snapshot-model.js'

export interface CachedPage {
  body: Buffer
  /** The headers the answer was sent with (content type, Allow, Vary, ETag, CORS…). */
  headers: Record<string, string>
  etag: string
}

/** Keys remembered by the doorkeeper: about a megabyte of keys. */
const SEEN_KEYS = 10_000

/**
 * Bounded by bytes. First in, first out: a hot page that falls out comes straight back in. A page is
 * kept the second time it is made, not the first: most pages of a long tail are asked for once, and
 * keeping each of them cost uncached answers a fifth of their speed in allocation and eviction.
 */
export class PageCache {
  private readonly pages = new Map<string, CachedPage>()
  private readonly seen = new Set<string>()
  private bytes = 0

  constructor (private readonly maxBytes: number) {}

  get (key: string): CachedPage | undefined {
    return this.pages.get(key)
  }

  set (key: string, page: CachedPage): void {
    if (!this.seen.has(key)) {
      if (this.seen.size >= SEEN_KEYS) this.seen.delete(this.seen.values().next().value as string)
      this.seen.add(key)
      return
    }
    const size = page.body.length + key.length
    if (size > this.maxBytes || this.pages.has(key)) return
    while (this.bytes + size > this.maxBytes) {
      const [oldest, evicted] = this.pages.entries().next().value as [string, CachedPage]
      this.pages.delete(oldest)
      this.bytes -= evicted.body.length + oldest.length
    }
    this.pages.set(key, page)
    this.bytes += size
  }

  get size (): number {
    return this.pages.size
  }
}

const caches = new WeakMap<SnapshotModel, PageCache>()

/** The cache of a model, made on first use. */
export function pageCacheOf (model: SnapshotModel, maxBytes: number): PageCache {
  let cache = caches.get(model)
  if (cache === undefined) {
    cache = new PageCache(maxBytes)
    caches.set(model, cache)
  }
  return cache
}
