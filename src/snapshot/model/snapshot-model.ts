// The served state: immutable, per language, items already rendered in served order; a route asks a
// LanguageListing for a count and a page and gets bytes back.
import type { ItemMemory } from './item-memory.js'
import { servedBefore } from './item-bytes.js'
import type { IdSlots } from './id-slots.js'
import { NO_ITEMS, Overlay, mergeRanks, type SlotOrder } from './overlay.js'

/**
 * Where each item's served JSON is, by slot (ItemColumns). Each item is followed by a comma, so a page's items go
 * out comma included.
 */
interface ItemStore {
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
    /** Slots to take from, or null for consecutive slots `from`..`to` (a flat listing's ranks). */
    private readonly slots: Uint32Array | null,
    private readonly from: number,
    private readonly to: number
  ) {}

  private slot (i: number): number {
    return this.slots === null ? i : this.slots[i] as number
  }

  get byteLength (): number {
    const { lengthOf } = this.store
    if (this.to <= this.from) return 0
    let length = this.to - this.from - 1 // the commas between items
    for (let i = this.from; i < this.to; i++) length += lengthOf[this.slot(i)] as number
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
      const slot = this.slot(i)
      const at = startOf[slot] as number
      const next = at + (lengthOf[slot] as number) + 1 // with its comma
      if (chunkOf[slot] === chunk && at === end) {
        end = next
        continue
      }
      if (chunk >= 0) views.push((chunks[chunk] as Buffer).subarray(start, end))
      chunk = chunkOf[slot] as number
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

/** Company id → the ranks of its items, ascending, every company's a stretch of one array (ADR 015). */
export class CompanyRanks {
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

  /** A company's list as a page reads it: its stretch of the one array, no view made. */
  list (company: number): Overlay {
    const slot = this.slotOf.get(company)
    if (slot < 0) return NO_ITEMS
    return Overlay.within(this.ranks, this.starts[slot] as number, this.starts[slot + 1] as number)
  }

  /** Every company's list, in no order (change-index.ts gives each rank its companies from them). */
  * lists (): Generator<[number, Uint32Array]> {
    for (const [company, slot] of this.slotOf.entries()) {
      yield [company, this.ranks.subarray(this.starts[slot] as number, this.starts[slot + 1] as number)]
    }
  }
}

/**
 * A flat listing's columns, by slot (ADR 031): its ranks `0..size`, then room for the items its derived versions
 * add, each a slot of its own never given out twice, so that an older version reads its slots unchanged. Given
 * out and written by the control thread's change index (change-index.ts); nothing here changes once built.
 */
export class ItemColumns {
  constructor (
    readonly chunkOf: Uint16Array | Uint32Array,
    readonly startOf: Uint32Array,
    readonly lengthOf: Uint16Array | Uint32Array,
    /** dateKey of each slot's backdate, and its pk: the served order's keys. */
    readonly dateOf: Uint32Array,
    readonly pkOf: Float64Array,
    readonly size: number,
    readonly byCompany: CompanyRanks
  ) {}

  /** Slot `a` before slot `b` in served order. */
  readonly before: SlotOrder = (a, b) => {
    const { dateOf, pkOf } = this
    return servedBefore(dateOf[a] as number, pkOf[a] as number, dateOf[b] as number, pkOf[b] as number)
  }
}

/** Room after a flat listing's ranks for the items change files add: a sixteenth, at least 16 (ADR 031). */
export function roomFor (size: number): number {
  return Math.max(16, size >>> 4)
}

/** What the change files since a flat listing made of it: its lists, less what they removed, with what they added. */
interface ListingChanges {
  all: Overlay
  /** The lists of the companies they concerned; the others are the flat listing's. */
  companies: ReadonlyMap<number, Overlay>
}

interface Page {
  count: number
  items: PageItems
}

// Unions of several companies are worth keeping: the same filter is usually paged through.
const UNION_CACHE_SIZE = 256

export class LanguageListing {
  readonly store: ItemStore

  /**
   * @param columns its items by slot, and the flat listing's company lists
   * @param changes null: the flat listing as it is (a load's); otherwise what change files made of it
   */
  constructor (
    readonly columns: ItemColumns,
    readonly changes: ListingChanges | null,
    chunks: readonly Buffer[],
    memory: ItemMemory
  ) {
    const { chunkOf, startOf, lengthOf } = columns
    this.store = { chunks, chunkOf, startOf, lengthOf, memory }
    this.all = changes?.all ?? new Overlay(null, columns.size)
    this.size = this.all.size
  }

  private readonly unions = new Map<string, Overlay>()

  /** Every item, in served order: a flat listing's is every rank, unedited. */
  readonly all: Overlay

  readonly size: number

  /** Items linked to a company, or every item when `companies` is null; a union when there are several. */
  page (companies: readonly number[] | null, offset: number, limit: number): Page {
    const list = companies === null ? this.all : this.listFor(companies)
    const count = list.size
    const from = Math.min(offset, count)
    const to = Math.min(count, from + limit)
    // An unedited list's slots are its base's, read where they are; an edited one's are walked into a small array.
    const items = list.edited
      ? new PageItems(this.store, list.slots(from, to), 0, to - from)
      : new PageItems(this.store, list.base, list.baseFrom + from, list.baseFrom + to)
    return { count, items }
  }

  private list (company: number): Overlay {
    return this.changes?.companies.get(company) ?? this.columns.byCompany.list(company)
  }

  private listFor (companies: readonly number[]): Overlay {
    if (companies.length === 1) return this.list(companies[0] as number)
    const ids = [...new Set(companies)].sort((a, b) => a - b)
    if (ids.length === 1) return this.list(ids[0] as number)
    const key = ids.join(',')
    const cached = this.unions.get(key)
    if (cached !== undefined) {
      // Refresh its place so the cache drops the least recently used union first.
      this.unions.delete(key)
      this.unions.set(key, cached)
      return cached
    }
    const lists = ids.map(id => this.list(id))
    // Flat lists merge as numbers alone (ADR 027).
    const union = lists.some(list => list.edited)
      ? Overlay.union(lists, this.columns.before)
      : Overlay.over(mergeRanks(lists.map(list => list.ranks())))
    if (this.unions.size >= UNION_CACHE_SIZE) this.unions.delete(this.unions.keys().next().value as string)
    this.unions.set(key, union)
    return union
  }
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
  /** Read from a version image, not parsed, in `ms` (ADR 033). */
  fromImage?: { ms: number }
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
