// The served state: immutable, per language, items already serialized in served order. Plain TypeScript,
// no Fastify: the route asks a LanguageListing for a count and a page and gets bytes back.
import type { ItemMemory } from './item-memory.js'

/**
 * Where each item's served JSON is, by rank (position in served order). Every item is followed in its
 * chunk by a comma (at `startOf + lengthOf`), so the items of a page are copied or sent a comma included.
 */
export interface ItemStore {
  chunks: readonly Buffer[]
  /** Each as narrow as its numbers allow (build-model.ts). */
  chunkOf: Uint16Array | Uint32Array
  startOf: Uint32Array
  lengthOf: Uint16Array | Uint32Array
  /** What the chunks are: shared memory, let go once the model is retired (item-memory.ts). */
  memory: ItemMemory
}

/**
 * A page's items as JSON array contents (`{…},{…}`, no brackets), not yet copied anywhere: the caller
 * either allocates the whole answer once and has the items written into it, or sends views of the
 * memory they are kept in.
 */
export class PageItems {
  constructor (
    private readonly store: ItemStore,
    /** Ranks to take from, or null for consecutive ranks `from`..`to`. */
    private readonly ranks: Uint32Array | null,
    private readonly from: number,
    private readonly to: number
  ) {}

  private rank (i: number): number {
    return this.ranks === null ? i : this.ranks[i] as number
  }

  get byteLength (): number {
    const { lengthOf } = this.store
    if (this.to <= this.from) return 0
    let length = this.to - this.from - 1 // the commas between items
    for (let i = this.from; i < this.to; i++) length += lengthOf[this.rank(i)] as number
    return length
  }

  /** Writes the items into `target` at `at`; returns the number of bytes written. */
  copyTo (target: Buffer, at: number): number {
    let end = at
    for (const view of this.views()) end += view.copy(target, end)
    return end - at
  }

  /**
   * The items as views of the chunks they are kept in, nothing copied: items that lie side by side in
   * one chunk come as one view. Together the views hold exactly the bytes `copyTo` writes.
   */
  views (): Buffer[] {
    const { chunks, chunkOf, startOf, lengthOf, memory } = this.store
    memory.check()
    const views: Buffer[] = []
    let chunk = -1
    let start = 0
    let end = 0
    for (let i = this.from; i < this.to; i++) {
      const rank = this.rank(i)
      const at = startOf[rank] as number
      const next = at + (lengthOf[rank] as number) + 1 // with its comma
      if (chunkOf[rank] === chunk && at === end) {
        end = next
        continue
      }
      if (chunk >= 0) views.push((chunks[chunk] as Buffer).subarray(start, end))
      chunk = chunkOf[rank] as number
      start = at
      end = next
    }
    // The last item goes without its comma.
    if (chunk >= 0) views.push((chunks[chunk] as Buffer).subarray(start, end - 1))
    return views
  }

  toString (): string {
    const out = Buffer.allocUnsafe(this.byteLength)
    this.copyTo(out, 0)
    return out.toString('utf8')
  }
}

/**
 * Company id → the ranks of its items, ascending. Every company's ranks are in one array, each company's
 * a stretch of it, not an array of its own: an array per company costs an ArrayBuffer and its backing
 * store, about 500 bytes more each: 34 MB against 8 over the 51,553 lists of the 1M bench snapshot
 * (docs/decisions/015).
 */
export class CompanyRanks {
  /**
   * @param slotOf company id → its slot
   * @param starts slot s's ranks are `ranks[starts[s]..starts[s + 1])`
   * @param ranks every slot's ranks, slot after slot
   */
  constructor (
    private readonly slotOf: ReadonlyMap<number, number>,
    private readonly starts: Uint32Array,
    private readonly ranks: Uint32Array
  ) {}

  get (company: number): Uint32Array | undefined {
    const slot = this.slotOf.get(company)
    if (slot === undefined) return undefined
    return this.ranks.subarray(this.starts[slot] as number, this.starts[slot + 1] as number)
  }
}

export interface Page {
  count: number
  items: PageItems
}

// Unions of several companies are worth keeping: the same filter is usually paged through.
const UNION_CACHE_SIZE = 256

export class LanguageListing {
  /**
   * @param store every item's served JSON, located by rank (served order: backdate desc, pk desc)
   * @param byCompany company id → ranks of its items, ascending
   */
  constructor (
    readonly language: string,
    private readonly store: ItemStore,
    private readonly byCompany: CompanyRanks
  ) {}

  private readonly unions = new Map<string, Uint32Array>()

  get size (): number {
    return this.store.lengthOf.length
  }

  /** Items linked to a company, or every item when `companies` is null; a union when there are several. */
  page (companies: readonly number[] | null, offset: number, limit: number): Page {
    // Without a filter the ranks are the positions themselves.
    const ranks = companies === null ? null : this.ranksFor(companies)
    const count = ranks === null ? this.size : ranks.length
    const from = Math.min(offset, count)
    return { count, items: new PageItems(this.store, ranks, from, Math.min(count, from + limit)) }
  }

  private ranksFor (companies: readonly number[]): Uint32Array {
    if (companies.length === 1) return this.byCompany.get(companies[0] as number) ?? EMPTY_RANKS
    const ids = [...new Set(companies)].sort((a, b) => a - b)
    if (ids.length === 1) return this.byCompany.get(ids[0] as number) ?? EMPTY_RANKS
    const key = ids.join(',')
    const cached = this.unions.get(key)
    if (cached !== undefined) {
      // Refresh its place so the cache drops the least recently used union first.
      this.unions.delete(key)
      this.unions.set(key, cached)
      return cached
    }
    const lists = ids.map(id => this.byCompany.get(id)).filter(list => list !== undefined)
    const union = mergeRanks(lists)
    if (this.unions.size >= UNION_CACHE_SIZE) this.unions.delete(this.unions.keys().next().value as string)
    this.unions.set(key, union)
    return union
  }
}

const EMPTY_RANKS = new Uint32Array(0)

/**
 * Union of ascending rank lists, each rank once, still ascending. Cost is linear in the lists' total
 * length (times log of their number), never in the size of the language.
 */
export function mergeRanks (lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 0) return EMPTY_RANKS
  if (lists.length === 1) return lists[0] as Uint32Array
  // Merge pairwise, smallest first, like a Huffman tree: each rank is copied O(log k) times.
  const queue = [...lists].sort((a, b) => a.length - b.length)
  while (queue.length > 1) {
    const merged = mergeTwo(queue.shift() as Uint32Array, queue.shift() as Uint32Array)
    let i = 0
    while (i < queue.length && (queue[i] as Uint32Array).length < merged.length) i++
    queue.splice(i, 0, merged)
  }
  return queue[0] as Uint32Array
}

function mergeTwo (a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length)
  let i = 0
  let j = 0
  let n = 0
  while (i < a.length && j < b.length) {
    const x = a[i] as number
    const y = b[j] as number
    if (x < y) { out[n++] = x; i++ } else if (y < x) { out[n++] = y; j++ } else { out[n++] = x; i++; j++ }
  }
  while (i < a.length) out[n++] = a[i++] as number
  while (j < b.length) out[n++] = b[j++] as number
  return n === out.length ? out : out.slice(0, n)
}

export interface SnapshotInfo {
  /** Where the snapshot was read from. */
  source: string
  /** A digest of the file's bytes: the same file gives the same version, on every replica. */
  version: string
  /** The snapshot's own version label (`generated_at`), if it has one. */
  generatedAt: string | null
  loadedAt: Date
}

/** One loaded snapshot: what a request is answered from, start to finish. */
export class SnapshotModel {
  constructor (
    readonly info: SnapshotInfo,
    private readonly listings: ReadonlyMap<string, LanguageListing>,
    /** The items' memory, every language's. */
    readonly memory: ItemMemory
  ) {}

  language (code: string): LanguageListing | undefined {
    return this.listings.get(code)
  }

  get languages (): string[] {
    return [...this.listings.keys()]
  }

  /** Items per language, for status reports. */
  itemCounts (): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const [code, listing] of this.listings) counts[code] = listing.size
    return counts
  }
}
