// What change files need of a flat listing and serving threads do not (ADR 031): ~45 MB at 1M, the control thread's.
import { IdSlots } from './id-slots.js'
import { STEP_MASK } from '../slices.js'
import type { Overlay } from './overlay.js'
import type { ItemColumns } from './snapshot-model.js'
import { AT, WIDTH, columnList, rowValue, type View } from './version-arrays.js'

/** 8-byte entries in a 4 KiB page. */
const PAGE_STRIDE = 512

/** Fresh pages map at first write: random writes faulted 16 MB in 72 ms in one step at 1M (ADR 026). */
function * faultedIn<T extends Float64Array | Uint32Array> (array: T): Generator<void, T> {
  const stride = PAGE_STRIDE * (8 / array.BYTES_PER_ELEMENT)
  for (let at = 0; at < array.length; at += 128 * 1024) {
    const end = Math.min(array.length, at + 128 * 1024)
    for (let i = at; i < end; i += stride) array[i] = array[i] as number
    yield
  }
  return array
}

/** Let go with the columns. */
const indexes = new WeakMap<ItemColumns, ChangeIndex>()

export class ChangeIndex {
  /** By every version derived from the columns, one never served too. */
  private used: number
  private readonly list: View[]

  private constructor (
    private readonly columns: ItemColumns,
    /** pk → its newest slot. */
    private readonly pks: IdSlots,
    /** Per slot of the room, its pk's slot before (-1: none). */
    private readonly previous: Int32Array,
    /** Slot s's are `companyIds[companyStart[s]..companyStart[s + 1])`. */
    private readonly companyStart: Uint32Array,
    private readonly companyIds: Float64Array
  ) {
    this.used = columns.size
    this.list = columnList(columns)
  }

  /** Made at the first ask; the store runs one derive at a time. */
  static * of (columns: ItemColumns, room = 0): Generator<void, ChangeIndex> {
    let index = indexes.get(columns)
    if (index === undefined) indexes.set(columns, index = yield * ChangeIndex.made(columns, room))
    return index
  }

  private static * made (columns: ItemColumns, room: number): Generator<void, ChangeIndex> {
    const { size, pkOf, byCompany } = columns
    const capacity = columns.startOf.length
    // Every slot's pk fits at most two-thirds full; the flat pks alone at most half.
    const pks = IdSlots.sized(Math.max(size, Math.ceil(0.75 * capacity)))
    yield * faultedIn(pks.keys)
    yield * faultedIn(pks.slots)
    for (let rank = 0; rank < size; rank++) {
      pks.set(pkOf[rank] as number, rank)
      if ((rank & STEP_MASK) === STEP_MASK) yield
    }
    const companyStart = yield * faultedIn(new Uint32Array(capacity + 1))
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
    return new ChangeIndex(columns, pks, new Int32Array(capacity - size), companyStart, ids)
  }

  /** The newest slot of `pk` in the version whose whole list is `all`, or -1. */
  slotOf (pk: number, all: Overlay): number {
    const { size, before } = this.columns
    for (let slot = this.pks.get(pk); slot >= 0; slot = slot < size ? -1 : this.previous[slot - size] as number) {
      if (all.holds(slot, before)) return slot
    }
    return -1
  }

  eachCompany (slot: number, use: (company: number) => void): void {
    const to = this.companyStart[slot + 1] as number
    for (let at = this.companyStart[slot] as number; at < to; at++) use(this.companyIds[at] as number)
  }

  fits (items: number, companies: number): boolean {
    return this.used + items <= this.columns.startOf.length &&
      (this.companyStart[this.used] as number) + companies <= this.companyIds.length
  }

  /** `row`: an upsert's (change-set.ts). A slot is never given out twice: only versions derived from here read it. */
  add (row: readonly number[], chunkBase: number, companies: readonly number[]): number {
    const { columns } = this
    const slot = this.used
    const from = this.companyStart[slot] as number
    if (slot >= columns.startOf.length || from + companies.length > this.companyIds.length) {
      throw new Error('no room for another item: the listing should have been flat')
    }
    for (let c = 0; c < WIDTH; c++) (this.list[c] as View)[slot] = rowValue(row, 0, c, chunkBase)
    const pk = row[AT.pkOf] as number
    this.companyIds.set(companies, from)
    this.companyStart[slot + 1] = from + companies.length
    this.previous[slot - columns.size] = this.pks.get(pk)
    this.pks.set(pk, slot)
    this.used = slot + 1
    return slot
  }
}
