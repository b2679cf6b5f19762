// Whole answers kept per snapshot model (ADR 001): a new snapshot starts with an empty cache and the old one goes
// with its model, so nothing stale is served and nothing needs invalidating.
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
 * The cache key of a page request: all its answer's bytes depend on but the snapshot. An absent header and an
 * empty one differ (an empty Accept is a 406); GET and HEAD share a key (a HEAD answer is the GET's).
 */
export function pageKey (request: PageRequest, trustProxy: boolean, corsVaries: boolean): string {
  const { accept, origin } = request.headers
  const proto = request.headers['x-forwarded-proto']
  return `${request.url}\n${request.linkHost}\n${headerKey(accept)}${trustProxy ? headerKey(proto) : ''}${corsVaries ? headerKey(origin) : ''}`
}

/** Keys remembered by the doorkeeper: about a megabyte of keys. */
const SEEN_KEYS = 10_000

/**
 * Bounded by bytes, first in first out; a page is kept the second time it is made (a doorkeeper). Both orders
 * live in arrays, not read back from the Map and Set, where V8 walks the dead slots of deletions (ADR 001).
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
   * Whether a page about to be made for `key` would be kept: seen before (else remembered now) and not kept
   * yet. Asked first, so that a page not kept is sent in parts, never copied (ADR 004).
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
