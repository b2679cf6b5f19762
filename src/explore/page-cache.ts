// Whole answers kept per snapshot model: a repeated request costs a lookup and a write, like a static
// file. The cache belongs to the model it was filled from, so a new snapshot starts with an empty one
// and the old one goes with the old model: nothing stale can be served, nothing needs invalidating.
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { PageRequest } from './page-request.js'

/** A 200 page answer as it goes out (a PageAnswer, page-answer.ts), kept whole: its body in one buffer. */
export interface CachedPage {
  status: 200
  /** Names and values in one list, as `writeHead` takes them. */
  headers: string[]
  body: Buffer
}

/** A header's part of a page cache key: absent and empty apart, and nothing one value could forge. */
function headerKey (value: string | string[] | undefined): string {
  return value === undefined ? '\n-' : `\n=${String(value)}`
}

/**
 * The page cache key of a page request: everything the bytes of its answer depend on besides the snapshot
 * (the cache is per snapshot). An absent header and an empty one are different requests (an empty Accept
 * is a 406). GET and HEAD share a key: a HEAD answer is the GET's without its body. X-Forwarded-Proto
 * counts only when proxies are trusted, Origin only when CORS varies by it.
 */
export function pageKey (request: PageRequest, trustProxy: boolean, corsVaries: boolean): string {
  const { accept, origin } = request.headers
  const proto = request.headers['x-forwarded-proto']
  return `${request.url}\n${request.linkHost}\n${headerKey(accept)}${trustProxy ? headerKey(proto) : ''}${corsVaries ? headerKey(origin) : ''}`
}

/** Keys remembered by the doorkeeper: about a megabyte of keys. */
const SEEN_KEYS = 10_000

/**
 * Bounded by bytes. First in, first out: a hot page that falls out comes straight back in. A page is
 * kept the second time it is made, not the first: most pages of a long tail are asked for once, and
 * keeping each of them cost uncached answers a fifth of their speed in allocation and eviction.
 *
 * Both orders are kept in arrays, not read back from the Map and Set: V8 leaves a deleted entry's slot
 * in place until it rehashes, so taking the "first" entry after many deletions walks every dead slot
 * (that alone was 8% of an uncached answer on a long tail).
 */
export class PageCache {
  private readonly pages = new Map<string, CachedPage>()
  /** Keys of `pages` in the order they came in, from `oldest` on. */
  private order: string[] = []
  private oldest = 0
  private bytes = 0
  private readonly seen = new Set<string>()
  /** The doorkeeper's keys, a ring: `seenRing[seenNext]` is the oldest once the ring is full. */
  private readonly seenRing: string[] = []
  private seenNext = 0

  constructor (private readonly maxBytes: number) {}

  get (key: string): CachedPage | undefined {
    return this.pages.get(key)
  }

  /**
   * Whether a page about to be made for `key` would be kept: not the first time it is made (then the key
   * is remembered), nor when it is kept already. Asked before the page is made, so that a page that will
   * not be kept can be sent in parts, never copied into one buffer.
   */
  wants (key: string): boolean {
    if (!this.seen.has(key)) {
      this.remember(key)
      return false
    }
    return !this.pages.has(key)
  }

  /** Keeps a page `wants` asked for, unless it could never fit. */
  keep (key: string, page: CachedPage): void {
    const size = page.body.length + key.length
    if (size > this.maxBytes || this.pages.has(key)) return
    while (this.bytes + size > this.maxBytes) this.evictOldest()
    // An indented body may be a slice of Node's pool, shared with other buffers: a kept page has its own.
    const body = page.body.byteLength === page.body.buffer.byteLength ? page.body : Buffer.from(page.body)
    this.pages.set(key, { ...page, body })
    this.order.push(key)
    this.bytes += size
  }

  get size (): number {
    return this.pages.size
  }

  private remember (key: string): void {
    if (this.seenRing.length < SEEN_KEYS) {
      this.seenRing.push(key)
    } else {
      this.seen.delete(this.seenRing[this.seenNext] as string)
      this.seenRing[this.seenNext] = key
      this.seenNext = (this.seenNext + 1) % SEEN_KEYS
    }
    this.seen.add(key)
  }

  private evictOldest (): void {
    const key = this.order[this.oldest] as string
    this.oldest++
    const page = this.pages.get(key) as CachedPage
    this.pages.delete(key)
    this.bytes -= page.body.length + key.length
    // Drop the evicted prefix now and then, so the array does not grow with every page ever kept.
    if (this.oldest > 1024 && this.oldest * 2 > this.order.length) {
      this.order = this.order.slice(this.oldest)
      this.oldest = 0
    }
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
