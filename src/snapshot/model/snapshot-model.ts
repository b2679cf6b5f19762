// The served state: immutable, per language, items already rendered and in served order.
import type { ItemMemory } from './item-memory.js'
import { servedBefore } from './item-bytes.js'
import type { IdSlots } from './id-slots.js'
import { NO_ITEMS, Overlay, type SlotOrder } from './overlay.js'
import { unionCache } from './union-cache.js'
import { COLUMN_NAMES, type ColumnArrays } from './version-arrays.js'

/** By slot. Each item is followed by a comma, so a page's items go out comma included. */
interface ItemStore extends Pick<ColumnArrays, 'chunkOf' | 'startOf' | 'lengthOf'> {
  chunks: readonly Buffer[]
  /** Let go once the model is retired. */
  memory: ItemMemory
}

/** JSON array contents (`{…},{…}`), not yet copied: written into one answer, or sent as views (ADR 004). */
export class PageItems {
  constructor (
    private readonly store: ItemStore,
    /** Null: slots `from`..`to` (a flat listing's ranks). */
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

  copyTo (target: Buffer, at: number): number {
    let end = at
    for (const view of this.views()) end += view.copy(target, end)
    return end - at
  }

  /** Neighbours in one view. */
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

/** Every company's ascending ranks a stretch of one array (ADR 015). */
export class CompanyRanks {
  /** Slot s's ranks are `ranks[starts[s]..starts[s + 1])`. */
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

  /** No view made. */
  list (company: number): Overlay {
    const slot = this.slotOf.get(company)
    if (slot < 0) return NO_ITEMS
    return Overlay.within(this.ranks, this.starts[slot] as number, this.starts[slot + 1] as number)
  }

  /** In no order. */
  * lists (): Generator<[number, Uint32Array]> {
    for (const [company, slot] of this.slotOf.entries()) {
      yield [company, this.ranks.subarray(this.starts[slot] as number, this.starts[slot + 1] as number)]
    }
  }
}

/** By slot: ranks `0..size`, then room for derived versions' items, a slot never given out twice (ADR 031). */
export interface ItemColumns extends Readonly<ColumnArrays> {}
export class ItemColumns {
  constructor (columns: Readonly<ColumnArrays>, readonly size: number, readonly byCompany: CompanyRanks) {
    for (const name of COLUMN_NAMES) (this as Record<string, unknown>)[name] = columns[name]
  }

  readonly before: SlotOrder = (a, b) => {
    const { dateOf, pkOf } = this
    return servedBefore(dateOf[a] as number, pkOf[a] as number, dateOf[b] as number, pkOf[b] as number)
  }
}

/** ADR 031. */
export function roomFor (size: number): number {
  return Math.max(16, size >>> 4)
}

interface ListingChanges {
  all: Overlay
  /** Only the companies they concerned. */
  companies: ReadonlyMap<number, Overlay>
}

interface Page {
  count: number
  items: PageItems
}

/** Names a listing in this thread's union cache. */
let listings = 0

export class LanguageListing {
  readonly store: ItemStore

  /** `changes` null: the flat listing as loaded. */
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

  private readonly id = listings++

  readonly all: Overlay

  readonly size: number

  page (companies: readonly number[] | null, offset: number, limit: number): Page {
    const list = companies === null ? this.all : this.listFor(companies)
    const count = list.size
    const from = Math.min(offset, count)
    const to = Math.min(count, from + limit)
    // An edited list's slots are walked into a small array; an unedited one's are read where they are.
    const items = list.edited
      ? new PageItems(this.store, list.slots(from, to), 0, to - from)
      : new PageItems(this.store, list.base, list.baseFrom + from, list.baseFrom + to)
    return { count, items }
  }

  private list (company: number): Overlay {
    return this.changes?.companies.get(company) ?? this.columns.byCompany.list(company)
  }

  /**
   * Unions of several companies are worth keeping: the same filter is usually paged through. Only companies with
   * items here make the key, so that unknown ids make no new union (ADR 037).
   */
  private listFor (companies: readonly number[]): Overlay {
    if (companies.length === 1) return this.list(companies[0] as number)
    const sorted = Float64Array.from(companies).sort()
    const ids: number[] = []
    const lists: Overlay[] = []
    for (let i = 0; i < sorted.length; i++) {
      const id = sorted[i] as number
      if (id === sorted[i - 1]) continue
      const list = this.list(id)
      if (list.size === 0) continue
      ids.push(id)
      lists.push(list)
    }
    if (lists.length <= 1) return lists[0] ?? NO_ITEMS
    const key = `${this.id}:${ids.join(',')}`
    const cached = unionCache.get(key)
    if (cached !== undefined) return cached
    const union = Overlay.union(lists, this.columns.size, this.columns.before)
    unionCache.keep(key, union)
    return union
  }
}

export interface AppliedChange {
  id: string
  source: string
  digest: string
  generatedAt: string | null
  upserts: number
  deletes: number
  /** Deletes of absent items: no error (a change file's rule). */
  absentDeletes: number
}

export interface SnapshotInfo {
  source: string
  /** The file's digest: the same on every replica. */
  version: string
  generatedAt: string | null
  loadedAt: Date
  /** A derived version's; `version` is then `<it>+<last change id>`. */
  snapshotVersion?: string
  changes?: readonly AppliedChange[]
  /** A derived version's ETag prefix, since `version` names only the last change (digests of all). */
  contentVersion?: string
  /** ADR 033. */
  fromImage?: { ms: number }
}

/** What a request is answered from, start to finish. */
export class SnapshotModel {
  constructor (
    readonly info: SnapshotInfo,
    private readonly listings: ReadonlyMap<string, LanguageListing>,
    readonly memory: ItemMemory,
    /** Replaced or deleted items: garbage until the next full load. */
    readonly garbageBytes = 0
  ) {}

  language (code: string): LanguageListing | undefined {
    return this.listings.get(code)
  }

  /** In the order declared. */
  get listingsByLanguage (): ReadonlyMap<string, LanguageListing> {
    return this.listings
  }

  get languages (): string[] {
    return [...this.listings.keys()]
  }

  itemCounts (): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const [code, listing] of this.listings) counts[code] = listing.size
    return counts
  }
}
