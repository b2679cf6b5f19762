// What change files need of a flat listing and a serving thread does not (ADR 031): pk → rank, and each slot's
// companies (not in the served bytes). Made in slices where change files are expected: ~45 MB at 1M, theirs alone.
import { IdSlots } from './id-slots.js'
import { STEP_MASK } from '../slices.js'
import type { ItemColumns } from './snapshot-model.js'

/** Entries of 8 bytes in a page of 4 KiB: a write at this stride touches every page once. */
const PAGE_STRIDE = 512

/**
 * `array` with every page written once, a megabyte or so a step: fresh pages are mapped at their first write,
 * and random writes would fault them all in at once (16 MB: 72 ms in one step at 1M; ADR 026).
 */
function * faultedIn<T extends Float64Array | Uint32Array> (array: T): Generator<void, T> {
  const stride = PAGE_STRIDE * (8 / array.BYTES_PER_ELEMENT)
  for (let at = 0; at < array.length; at += 128 * 1024) {
    const end = Math.min(array.length, at + 128 * 1024)
    for (let i = at; i < end; i += stride) array[i] = array[i] as number
    yield
  }
  return array
}

export class ChangeIndex {
  private constructor (
    /** The flat listing's pks → their ranks; the pks changed since are each version's own (ListingChanges.pks). */
    readonly pks: IdSlots,
    /** Slot s's companies are `companyIds[companyStart[s]..companyStart[s + 1])`, with room after the ranks'. */
    private readonly companyStart: Uint32Array,
    private readonly companyIds: Float64Array
  ) {}

  /**
   * The index of `columns`, in slices: pks from its keys, each rank's companies from its company lists; room for
   * `room` more company ids, and at least a sixteenth more (at least 16).
   */
  static * of (columns: ItemColumns, room = 0): Generator<void, ChangeIndex> {
    const { size, pkOf, byCompany } = columns
    const pks = IdSlots.sized(size)
    yield * faultedIn(pks.keys)
    yield * faultedIn(pks.slots)
    for (let rank = 0; rank < size; rank++) {
      pks.set(pkOf[rank] as number, rank)
      if ((rank & STEP_MASK) === STEP_MASK) yield
    }
    // Counted, then filled, as build-model.ts makes the company lists.
    const companyStart = yield * faultedIn(new Uint32Array(columns.startOf.length + 1))
    let total = 0
    let work = 0
    for (const [, ranks] of byCompany.lists()) {
      for (const rank of ranks) companyStart[rank + 1] = (companyStart[rank + 1] as number) + 1
      total += ranks.length
      work += ranks.length + 16
      if (work > STEP_MASK) {
        work = 0
        yield
      }
    }
    for (let rank = 0; rank < size; rank++) {
      companyStart[rank + 1] = (companyStart[rank + 1] as number) + (companyStart[rank] as number)
    }
    yield
    const next = yield * faultedIn(new Uint32Array(size))
    for (let at = 0; at < size; at += STEP_MASK + 1) {
      next.set(companyStart.subarray(at, Math.min(size, at + STEP_MASK + 1)), at)
      yield
    }
    const ids = yield * faultedIn(new Float64Array(total + Math.max(16, total >>> 4, room)))
    work = 0
    for (const [company, ranks] of byCompany.lists()) {
      for (const rank of ranks) {
        const at = next[rank] as number
        ids[at] = company
        next[rank] = at + 1
      }
      work += ranks.length + 16
      if (work > STEP_MASK) {
        work = 0
        yield
      }
    }
    return new ChangeIndex(pks, companyStart, ids)
  }

  /** Slot `slot`'s companies. */
  companiesOf (slot: number): Float64Array {
    return this.companyIds.subarray(this.companyStart[slot] as number, this.companyStart[slot + 1] as number)
  }

  /** Calls `use` with each of slot `slot`'s companies. */
  eachCompany (slot: number, use: (company: number) => void): void {
    const to = this.companyStart[slot + 1] as number
    for (let at = this.companyStart[slot] as number; at < to; at++) use(this.companyIds[at] as number)
  }

  /** Whether `count` more company ids fit after slot `slot`'s. */
  fits (slot: number, count: number): boolean {
    return (this.companyStart[slot] as number) + count <= this.companyIds.length
  }

  /** Gives `slot`, the next one given out, its companies (each once; `fits` said they fit). */
  setCompanies (slot: number, companies: readonly number[]): void {
    const from = this.companyStart[slot] as number
    if (from + companies.length > this.companyIds.length) throw new Error('no room for more company ids')
    this.companyIds.set(companies, from)
    this.companyStart[slot + 1] = from + companies.length
  }
}
