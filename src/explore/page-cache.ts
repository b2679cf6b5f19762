// Whole answers kept per snapshot model (ADR 001): a new snapshot starts with an empty cache and the old one goes
// with its model, so nothing stale is served and nothing needs invalidating. Bounded in bytes, keys and all (ADR 037).
import { randomInt } from 'node:crypto'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { unionCacheBytes, V8_HASHED_LENGTH } from '../snapshot/model/union-cache.js'
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

/** Keys remembered by the doorkeeper, as hashes. */
const SEEN_KEYS = 10_000

/** A Set slot of a hash and its share of the table (33 bytes measured with 8-byte words), and the ring's 4. */
const SEEN_KEY_BYTES = 40

/** The doorkeeper's most: its hashes, and as much again while V8 rehashes its Set. */
export const DOORKEEPER_MAX_BYTES = 2 * SEEN_KEYS * SEEN_KEY_BYTES

/**
 * What a kept page holds beside its body and key: the Map entry, the page and its headers, the Buffer and its
 * backing store (measured ~1,150 bytes on Node 20 with 52-byte bodies; ADR 037).
 */
export const PAGE_ENTRY_BYTES = 1200

/** V8 hashes a longer string by its length alone: such keys would share one bucket of the Map. */
export const MAX_KEY_LENGTH = V8_HASHED_LENGTH

/** What one serving thread's caches hold at most: the pages, their doorkeeper and the unions (the memory budget's). */
export function servingCachesBytes (pageCacheBytes: number): number {
  return pageCacheBytes > 0 ? pageCacheBytes + DOORKEEPER_MAX_BYTES + unionCacheBytes(pageCacheBytes) : 0
}

/** A 30-bit hash (a small integer to V8) of the whole key: seeded FNV-1a, then murmur3's finish. */
function keyHash (key: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35)
  return (hash ^ (hash >>> 16)) & 0x3fff_ffff
}

/**
 * Bounded by bytes, first in first out; a page is kept the second time it is made (a doorkeeper). The doorkeeper
 * keeps hashes: two keys of one hash only let a page in a request early. Both orders live in arrays, not read back
 * from the Map and Set, where V8 walks the dead slots of deletions (ADR 001).
 */
export class PageCache {
  private readonly pages = new Map<string, CachedPage>()
  /** Keys of `pages` in the order they came in, from `oldest` on. */
  private order: string[] = []
  private oldest = 0
  /** Of the kept pages: their bodies, keys and entries. */
  private kept = 0
  private readonly seen = new Set<number>()
  /** The doorkeeper's hashes, a ring: `seenRing[seenNext]` is the oldest once the ring is full. */
  private readonly seenRing = new Int32Array(SEEN_KEYS)
  private seenCount = 0
  private seenNext = 0

  /** `seed`: random, so that a client cannot aim keys at one hash (tests give theirs). */
  constructor (private readonly maxBytes: number, private readonly seed = randomInt(0x4000_0000)) {}

  get (key: string): CachedPage | undefined {
    return this.pages.get(key)
  }

  /**
   * Whether a page about to be made for `key` would be kept: seen before (else remembered now) and not kept
   * yet. Asked first, so that a page not kept is sent in parts, never copied (ADR 004).
   */
  wants (key: string): boolean {
    if (key.length > MAX_KEY_LENGTH) return false
    const hash = keyHash(key, this.seed)
    if (!this.seen.has(hash)) {
      this.remember(hash)
      return false
    }
    return !this.pages.has(key)
  }

  /** Keeps a page `wants` asked for, unless it could never fit. */
  keep (key: string, page: CachedPage): void {
    const size = entryBytes(key, page.body)
    if (size > this.maxBytes || key.length > MAX_KEY_LENGTH || this.pages.has(key)) return
    while (this.kept + size > this.maxBytes) this.evictOldest()
    // An indented body may be a slice of Node's pool, which a copy from Buffer.from would be again: a kept page
    // has a buffer of its own, or it would hold the pool's other bytes.
    let body = page.body
    if (body.byteLength !== body.buffer.byteLength) {
      body = Buffer.allocUnsafeSlow(page.body.length)
      page.body.copy(body)
    }
    this.pages.set(key, { ...page, body })
    this.order.push(key)
    this.kept += size
  }

  get size (): number {
    return this.pages.size
  }

  /** What the kept pages hold, keys and entries counted: never more than the cache's bytes. */
  get bytes (): number {
    return this.kept
  }

  /** What the doorkeeper holds: a hash for each key it remembers, never more than DOORKEEPER_MAX_BYTES. */
  get doorkeeperBytes (): number {
    return this.seenCount * SEEN_KEY_BYTES
  }

  private remember (hash: number): void {
    if (this.seenCount < SEEN_KEYS) {
      this.seenRing[this.seenCount++] = hash
    } else {
      const oldest = this.seenRing[this.seenNext] as number
      // Two keys of one hash share its place: it goes with the older one.
      this.seen.delete(oldest)
      this.seenRing[this.seenNext] = hash
      this.seenNext = (this.seenNext + 1) % SEEN_KEYS
    }
    this.seen.add(hash)
  }

  private evictOldest (): void {
    const key = this.order[this.oldest] as string
    this.oldest++
    const page = this.pages.get(key) as CachedPage
    this.pages.delete(key)
    this.kept -= entryBytes(key, page.body)
    // Drop the evicted prefix now and then, so the array does not grow with every page ever kept.
    if (this.oldest > 1024 && this.oldest * 2 > this.order.length) {
      this.order = this.order.slice(this.oldest)
      this.oldest = 0
    }
  }
}

/** Headers and URLs are one-byte strings (Node reads them as Latin-1): a character a byte. */
function entryBytes (key: string, body: Buffer): number {
  return body.length + key.length + PAGE_ENTRY_BYTES
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
