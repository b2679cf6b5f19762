// The served state: immutable, per language, items already rendered in served order; a route asks a
// LanguageListing for a count and a page and gets bytes back.
import type { ItemMemory } from './item-memory.js'
import { servedBefore } from './item-bytes.js'
import { RankOrder } from './rank-order.js'
import type { IdSlots } from './id-slots.js'

/**
 * Where each item's served JSON is, by slot: a loaded listing's slots are its ranks; a derived version adds
 * slots after them (ADR 026). Each item is followed by a comma, so a page's items go out comma included.
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

/** A page's items as JSON array contents (`{…},{…}`), not yet copied: written into one answer, or sent as views. */
export class PageItems {
  constructor (
    private readonly store: ItemStore,
    /** Slots to take from, or null for consecutive slots `from`..`to` (a loaded listing's ranks). */
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

  /** The items as views of their chunks, nothing copied, neighbours in one view: the bytes `copyTo` writes. */
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

/** A company's slots in served order: a stretch of a loaded listing's array, or pieces (rank-order.ts). */
export type CompanyList = Uint32Array | RankOrder

/** Company id → the slots of its items, in served order. */
export interface CompanyLists {
  get: (company: number) => CompanyList | undefined
}

/** Company id → the ranks of its items, ascending, every company's a stretch of one array (ADR 015). */
export class CompanyRanks implements CompanyLists {
  /**
   * @param slotOf company id → its slot
   * @param starts slot s's ranks are `ranks[starts[s]..starts[s + 1])`
   * @param ranks every slot's ranks, slot after slot
   */
  constructor (
    readonly slotOf: IdSlots,
    readonly starts: Uint32Array,
    readonly ranks: Uint32Array
  ) {}

  get (company: number): Uint32Array | undefined {
    const slot = this.slotOf.get(company)
    if (slot < 0) return undefined
    return this.ranks.subarray(this.starts[slot] as number, this.starts[slot + 1] as number)
  }

  /** Every company's list, in no order (slot-space.ts indexes each item's companies from them). */
  * lists (): Generator<[number, Uint32Array]> {
    for (const [company, slot] of this.slotOf.entries()) {
      yield [company, this.ranks.subarray(this.starts[slot] as number, this.starts[slot + 1] as number)]
    }
  }
}

/** A derived version's company lists: the loaded listing's, but for those a change concerned since (pieces). */
export class ChangedCompanies implements CompanyLists {
  constructor (readonly base: CompanyRanks, readonly changed: ReadonlyMap<number, RankOrder>) {}

  get (company: number): CompanyList | undefined {
    return this.changed.get(company) ?? this.base.get(company)
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
   * @param store every item's served JSON, located by slot
   * @param byCompany company id → slots of its items, in served order (backdate desc, pk desc)
   * @param order rank → slot (rank-order.ts); null when the slots are the ranks (a loaded listing)
   * @param keys each slot's served-order keys; they order a derived version's unions, while a loaded listing's
   *   slots are ranks, compared as numbers (ADR 027)
   */
  constructor (
    readonly language: string,
    readonly store: ItemStore,
    readonly byCompany: CompanyLists,
    readonly order: RankOrder | null = null,
    readonly keys: SlotKeys | null = null
  ) {
    this.size = order === null ? store.lengthOf.length : order.size
    this.before = keys === null || order === null ? null : keyOrder(keys)
  }

  private readonly before: SlotOrder | null

  private readonly unions = new Map<string, Uint32Array>()

  readonly size: number

  /** Items linked to a company, or every item when `companies` is null; a union when there are several. */
  page (companies: readonly number[] | null, offset: number, limit: number): Page {
    const list = companies === null ? this.order : this.listFor(companies)
    if (list instanceof RankOrder) {
      // A derived version's order, or a changed company's list: the page's slots taken from its pieces.
      const from = Math.min(offset, list.size)
      const to = Math.min(list.size, from + limit)
      return { count: list.size, items: new PageItems(this.store, list.slots(from, to), 0, to - from) }
    }
    // Without a filter a loaded listing's slots are the positions themselves.
    const ranks = list
    const count = ranks === null ? this.size : ranks.length
    const from = Math.min(offset, count)
    return { count, items: new PageItems(this.store, ranks, from, Math.min(count, from + limit)) }
  }

  private listFor (companies: readonly number[]): CompanyList {
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
      .map(list => list instanceof RankOrder ? list.slots(0, list.size) : list)
    // A loaded listing's slots are ranks, compared as numbers; a derived one's by keys (ADR 027).
    const union = mergeRanks(lists, this.before)
    if (this.unions.size >= UNION_CACHE_SIZE) this.unions.delete(this.unions.keys().next().value as string)
    this.unions.set(key, union)
    return union
  }
}

const EMPTY_RANKS = new Uint32Array(0)

/** Whether slot `a` comes before slot `b` in served order. */
export type SlotOrder = (a: number, b: number) => boolean

/** Each slot's served-order keys: its backdate's dateKey and its pk. */
export interface SlotKeys {
  dateOf: Uint32Array
  pkOf: Float64Array
}

/** Slots in served order by their keys. */
function keyOrder ({ dateOf, pkOf }: SlotKeys): SlotOrder {
  return (a, b) => servedBefore(dateOf[a] as number, pkOf[a] as number, dateOf[b] as number, pkOf[b] as number)
}

/** Union of rank lists in served order, each rank once: linear in the lists' length (× log of their number). */
export function mergeRanks (lists: readonly Uint32Array[], before: SlotOrder | null = null): Uint32Array {
  if (lists.length === 0) return EMPTY_RANKS
  if (lists.length === 1) return lists[0] as Uint32Array
  // Merge pairwise, smallest first, like a Huffman tree: each rank is copied O(log k) times.
  const queue = [...lists].sort((a, b) => a.length - b.length)
  while (queue.length > 1) {
    const a = queue.shift() as Uint32Array
    const b = queue.shift() as Uint32Array
    const merged = mergeTwo(a, b, before)
    let i = 0
    while (i < queue.length && (queue[i] as Uint32Array).length < merged.length) i++
    queue.splice(i, 0, merged)
  }
  return queue[0] as Uint32Array
}

/**
 * Two lists in served order merged, each slot once. `before` null (a loaded listing) compares numbers inline:
 * a second closure at the call site stops V8 inlining, and unions took twice as long (ADR 027).
 */
function mergeTwo (a: Uint32Array, b: Uint32Array, before: SlotOrder | null): Uint32Array {
  const out = new Uint32Array(a.length + b.length)
  let i = 0
  let j = 0
  let n = 0
  while (i < a.length && j < b.length) {
    const x = a[i] as number
    const y = b[j] as number
    if (x === y) {
      out[n++] = x; i++; j++
    } else if (before === null ? x < y : before(x, y)) {
      out[n++] = x; i++
    } else {
      out[n++] = y; j++
    }
  }
  while (i < a.length) out[n++] = a[i++] as number
  while (j < b.length) out[n++] = b[j++] as number
  return n === out.length ? out : out.slice(0, n)
}

/** A change file applied to a version: what the status lists, in the chain's order. */
export interface AppliedChange {
  id: string
  source: string
  digest: string
  generatedAt: string | null
  upserts: number
  deletes: number
  /** Deletes of items that were not there: no error (a change file's rule), counted. */
  absentDeletes: number
}

export interface SnapshotInfo {
  /** Where the snapshot was read from. */
  source: string
  /** A digest of the file's bytes: the same file gives the same version, on every replica. */
  version: string
  /** The snapshot's own version label (`generated_at`), if it has one. */
  generatedAt: string | null
  loadedAt: Date
  /** A derived version's: the snapshot's digest (`version` is `<it>+<last change id>`) and its change files. */
  snapshotVersion?: string
  changes?: readonly AppliedChange[]
  /**
   * A derived version's ETag prefix: the snapshot's digest and a digest of its change files' digests, since
   * `version` names only the last change's id. Absent: `version` says it all.
   */
  contentVersion?: string
}

/** One loaded snapshot: what a request is answered from, start to finish. */
export class SnapshotModel {
  constructor (
    readonly info: SnapshotInfo,
    private readonly listings: ReadonlyMap<string, LanguageListing>,
    /** The items' memory, every language's. */
    readonly memory: ItemMemory,
    /** Bytes of items no language serves any more (replaced or deleted): garbage until the next full load. */
    readonly garbageBytes = 0
  ) {}

  language (code: string): LanguageListing | undefined {
    return this.listings.get(code)
  }

  /** Every language's listing, in the order they were declared. */
  get listingsByLanguage (): ReadonlyMap<string, LanguageListing> {
    return this.listings
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
