// The slots a language's derived versions share (ADR 026): places, keys and companies by slot, only appended,
// so an older version reads its own slots unchanged. Made, in slices, only when a first change comes.
import { servedBefore } from './item-bytes.js'
import { CompanyRanks, type LanguageListing, type SlotOrder } from './snapshot-model.js'
import { IdSlots } from './id-slots.js'
import { float64Array, uint16Array, uint32Array } from './shared-arrays.js'

/** Steps between two points where the work may pause (slices.ts). */
const STEP_MASK = 0x3fff
/** Entries of a column copied between two points where the work may pause: 1 MB or so. */
const COPY_STEP = 128 * 1024

/** Entries of 8 bytes in a page of 4 KiB: a write at this stride touches every page once. */
const PAGE_STRIDE = 512

/**
 * `array` with every page written once, a megabyte or so a step: fresh pages are mapped at their first write,
 * and random writes would fault them all in at once (16 MB: 72 ms in one step at 1M; ADR 026).
 */
function * faultedIn<T extends Float64Array | Uint32Array> (array: T): Generator<void, T> {
  const stride = PAGE_STRIDE * (8 / array.BYTES_PER_ELEMENT)
  for (let at = 0; at < array.length; at += COPY_STEP) {
    const end = Math.min(array.length, at + COPY_STEP)
    for (let i = at; i < end; i += stride) array[i] = array[i] as number
    yield
  }
  return array
}

/** `from` copied into the start of `to`, in slices (a 4 MB copy into fresh pages is 15 ms in one step). */
function * copyInSlices<T extends Column> (from: Column, to: T): Generator<void, T> {
  for (let at = 0; at < from.length; at += COPY_STEP) {
    to.set(from.subarray(at, Math.min(from.length, at + COPY_STEP)), at)
    yield
  }
  return to
}

/**
 * The slots of a loaded listing and of its derived versions: columns that only grow. A version keeps the
 * arrays it was made with; a later one that needs room gets larger copies, so none is written under a reader.
 */
export class SlotSpace {
  chunkOf: Uint16Array | Uint32Array
  startOf: Uint32Array
  lengthOf: Uint16Array | Uint32Array
  /** dateKey of each slot's backdate, and its pk: the served order's keys. */
  dateOf: Uint32Array
  pkOf: Float64Array
  /** Slot s's companies are `companyIds[companyStart[s]..companyStart[s + 1])`. */
  companyStart: Uint32Array
  companyIds: Float64Array
  /** Slots taken, by every version made from this space (one that was never served too: none is reused). */
  used: number
  /** The loaded listing's pks; the changes since are each version's own (ListingLineage.pks). */
  readonly loadedPks: IdSlots

  private constructor (listing: LanguageListing | null) {
    const store = listing?.store
    this.chunkOf = store?.chunkOf ?? new Uint16Array(0)
    this.startOf = store?.startOf ?? new Uint32Array(0)
    this.lengthOf = store?.lengthOf ?? new Uint16Array(0)
    this.used = listing?.size ?? 0
    // A loaded listing's own keys, never written here: `of` ends with larger copies (reserve).
    this.dateOf = listing?.keys?.dateOf ?? uint32Array(0)
    this.pkOf = listing?.keys?.pkOf ?? float64Array(0)
    this.companyStart = new Uint32Array(this.used + 1)
    this.companyIds = new Float64Array(0)
    this.loadedPks = IdSlots.sized(this.used)
  }

  /** Slot `a` before slot `b` in served order. */
  readonly before: SlotOrder = (a, b) => {
    const { dateOf, pkOf } = this
    return servedBefore(dateOf[a] as number, pkOf[a] as number, dateOf[b] as number, pkOf[b] as number)
  }

  /** The space of a language a change file creates. */
  static empty (): SlotSpace {
    return new SlotSpace(null)
  }

  /** The space of a loaded listing, whose slots are its ranks. */
  static * of (listing: LanguageListing): Generator<void, SlotSpace> {
    if (listing.order !== null || listing.keys === null || !(listing.byCompany instanceof CompanyRanks)) {
      throw new Error('a slot space is made from a loaded listing')
    }
    const space = new SlotSpace(listing)
    const { pkOf, loadedPks } = space
    yield * faultedIn(loadedPks.keys)
    yield * faultedIn(loadedPks.slots)
    for (let slot = 0; slot < space.used; slot++) {
      loadedPks.set(pkOf[slot] as number, slot)
      if ((slot & STEP_MASK) === STEP_MASK) yield
    }
    // Companies by slot: counted, then filled, as build-model.ts builds the company lists.
    const companyStart = yield * faultedIn(space.companyStart)
    let total = 0
    let work = 0
    for (const [, slots] of listing.byCompany.lists()) {
      for (const slot of slots) companyStart[slot + 1] = (companyStart[slot + 1] as number) + 1
      total += slots.length
      work += slots.length + 16
      if (work > STEP_MASK) {
        work = 0
        yield
      }
    }
    for (let slot = 0; slot < space.used; slot++) {
      companyStart[slot + 1] = (companyStart[slot + 1] as number) + (companyStart[slot] as number)
    }
    yield
    const next = yield * copyInSlices(companyStart.subarray(0, space.used), new Uint32Array(space.used))
    const ids = yield * faultedIn(new Float64Array(total))
    let done = 0
    for (const [company, slots] of listing.byCompany.lists()) {
      for (const slot of slots) {
        const at = next[slot] as number
        ids[at] = company
        next[slot] = at + 1
      }
      done += slots.length + 16
      if (done > STEP_MASK) {
        done = 0
        yield
      }
    }
    space.companyIds = ids
    // Room for the first change files now, in the background, rather than in their own time.
    yield * space.reserve((space.used >>> 3) + 1024, (ids.length >>> 3) + 1024)
    return space
  }

  /** Slot `slot`'s companies. */
  companiesOf (slot: number): Float64Array {
    return this.companyIds.subarray(this.companyStart[slot] as number, this.companyStart[slot + 1] as number)
  }

  /** Room for more slots and company ids, copied in slices: growing 1M items' columns is ~45 MB of page faults. */
  * reserve (slots: number, companies: number): Generator<void> {
    const size = this.used + slots
    if (size > this.startOf.length) {
      const capacity = Math.max(size, this.used + (this.used >>> 3) + 1024)
      const grown = {
        chunkOf: this.chunkOf instanceof Uint16Array ? uint16Array(capacity) : uint32Array(capacity),
        startOf: uint32Array(capacity),
        lengthOf: this.lengthOf instanceof Uint16Array ? uint16Array(capacity) : uint32Array(capacity),
        dateOf: uint32Array(capacity),
        pkOf: float64Array(capacity),
        companyStart: new Uint32Array(capacity + 1)
      }
      for (const [name, to] of Object.entries(grown)) yield * copyInSlices(this[name as keyof typeof grown], to)
      Object.assign(this, grown)
    }
    const ids = (this.companyStart[this.used] as number) + companies
    if (ids > this.companyIds.length) {
      this.companyIds = yield * copyInSlices(this.companyIds, new Float64Array(
        Math.max(ids, this.companyIds.length + (this.companyIds.length >>> 3) + 1024)))
    }
  }

  /** A new slot for an item at `chunk`, `start`, `length`, with its keys and its companies (each once). */
  append (
    chunk: number, start: number, length: number, date: number, pk: number, companies: readonly number[]
  ): number {
    const slot = this.used
    const unique = [...new Set(companies)]
    this.room(slot + 1, chunk, length, (this.companyStart[slot] as number) + unique.length)
    this.chunkOf[slot] = chunk
    this.startOf[slot] = start
    this.lengthOf[slot] = length
    this.dateOf[slot] = date
    this.pkOf[slot] = pk
    const from = this.companyStart[slot] as number
    this.companyIds.set(unique, from)
    this.companyStart[slot + 1] = from + unique.length
    this.used = slot + 1
    return slot
  }

  /** Room for `slots` slots and the new item: larger copies (an eighth more) when needed, never grown in place. */
  private room (slots: number, chunk: number, length: number, companies: number): void {
    const capacity = this.startOf.length
    const grow = slots > capacity
    const size = grow ? Math.max(slots, capacity + (capacity >>> 3) + 1024) : capacity
    const wideChunks = this.chunkOf instanceof Uint16Array && chunk > 0xffff
    const wideLengths = this.lengthOf instanceof Uint16Array && length > 0xffff
    if (grow || wideChunks) this.chunkOf = narrowest(this.chunkOf, size, wideChunks)
    if (grow || wideLengths) this.lengthOf = narrowest(this.lengthOf, size, wideLengths)
    if (grow) {
      this.startOf = copied(this.startOf, size, uint32Array)
      this.dateOf = copied(this.dateOf, size, uint32Array)
      this.pkOf = copied(this.pkOf, size, float64Array)
      this.companyStart = copied(this.companyStart, size + 1, length => new Uint32Array(length))
    }
    if (companies > this.companyIds.length) {
      this.companyIds = copied(
        this.companyIds,
        Math.max(companies, this.companyIds.length + (this.companyIds.length >>> 3) + 1024),
        length => new Float64Array(length)
      )
    }
  }
}

type Column = Uint16Array | Uint32Array | Float64Array
function copied<T extends Column> (from: Column, size: number, make: (size: number) => T): T {
  const to = make(size)
  to.set(from.subarray(0, Math.min(from.length, size)))
  return to
}

/** A copy of `from`, two bytes an entry while its numbers fit (ADR 016), four once `widen` or already. */
function narrowest (from: Uint16Array | Uint32Array, size: number, widen: boolean): Uint16Array | Uint32Array {
  return widen || from instanceof Uint32Array ? copied(from, size, uint32Array) : copied(from, size, uint16Array)
}

/** A derived version's own part of a language: its space, and its pks changed since the load (-1: deleted). */
export interface ListingLineage {
  space: SlotSpace
  pks: ReadonlyMap<number, number>
}

/** The slot of `pk` in a version of `lineage`, or -1. */
export function slotOfPk (lineage: ListingLineage, pk: number): number {
  const changed = lineage.pks.get(pk)
  return changed ?? lineage.space.loadedPks.get(pk)
}
