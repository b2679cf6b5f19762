// Builds a SnapshotModel from validated items; only each item's bytes and sort and filter keys are kept.
import { IdSlots } from './id-slots.js'
import { sharedArray } from './shared-arrays.js'
import type { SnapshotItem } from '../../schemas/snapshot.js'
import {
  CompanyRanks, ItemColumns, LanguageListing, SnapshotModel, roomFor, type SnapshotInfo
} from './snapshot-model.js'
import { STEP_MASK, runInSlices, runToEnd } from '../slices.js'
import { ItemMemory } from './item-memory.js'
import { ItemBytes, servedBefore } from './item-bytes.js'
import {
  AT, COLUMN_NAMES, WIDTH, columnList, columnsOf, fillRow, kindFor, rowValue, type ColumnArrays, type View
} from './version-arrays.js'

// 4 MiB, not 32: a language's last chunk is copied whole when sealed (ADR 017).
const CHUNK_SIZE = 4 * 1024 * 1024

/** 256 small Maps: one of a million entries rehashes in one 36 ms step (ADR 013). */
class PkIndex {
  private readonly shards = Array.from({ length: 256 }, () => new Map<number, number>())

  get (pk: number): number | undefined {
    return this.shard(pk).get(pk)
  }

  set (pk: number, index: number): void {
    this.shard(pk).set(pk, index)
  }

  private shard (pk: number): Map<number, number> {
    return this.shards[((pk % 256) + 256) % 256] as Map<number, number>
  }
}

const BLOCK_SHIFT = 16
const BLOCK = 1 << BLOCK_SHIFT
const BLOCK_MASK = BLOCK - 1

/**
 * Blocks that never move (growing by copy stalled a reload), as JS arrays: V8 gives their pages back, malloc kept
 * freed typed arrays' (ADR 014).
 */
class Column {
  private readonly blocks: number[][] = []
  private last: number[] = []
  length = 0

  push (value: number): void {
    if ((this.length & BLOCK_MASK) === 0) {
      this.last = []
      this.blocks.push(this.last)
    }
    this.last.push(value)
    this.length++
  }

  get (index: number): number {
    return (this.blocks[index >>> BLOCK_SHIFT] as number[])[index & BLOCK_MASK] as number
  }

  /** `index`: one already pushed, or the next. */
  put (index: number, value: number): void {
    if (index === this.length) this.push(value)
    else (this.blocks[index >>> BLOCK_SHIFT] as number[])[index & BLOCK_MASK] = value
  }
}

/** A parse thread's batch (parse-batch.ts), item i at index i. */
export interface RenderedItems {
  /** Item i's row (version-arrays.ts) at `rows[i * WIDTH]`, its chunk the batch's own: 0. */
  rows: number[]
  /** Item i's companies end at `companyEnd[i]`. */
  companyEnd: number[]
  companies: number[]
}

class LanguageBuilder {
  /** As version-arrays.ts declares them. */
  private readonly columns = COLUMN_NAMES.map(() => new Column())
  /** Each column's largest number: how narrow it can be. */
  private readonly largest = COLUMN_NAMES.map(() => 0)
  /** One column, no small array per item. */
  private readonly companyIds = new Column()
  private readonly companyEnd = new Column()
  /** pk → source index of its first item, to report repeats. */
  readonly firstIndexOfPk = new PkIndex()

  get size (): number {
    return this.companyEnd.length
  }

  /** The row at `rows[at]`; its companies `companies[from..to)`. */
  place (
    rows: ArrayLike<number>, at: number, chunkBase: number, companies: ArrayLike<number>, from: number, to: number
  ): void {
    const { columns, largest } = this
    for (let c = 0; c < WIDTH; c++) {
      const value = rowValue(rows, at, c, chunkBase)
      if (value > (largest[c] as number)) largest[c] = value
      ;(columns[c] as Column).push(value)
    }
    for (let c = from; c < to; c++) this.companyIds.push(companies[c] as number)
    this.companyEnd.push(this.companyIds.length)
  }

  /** ~1 s at 1M, hence the yields. */
  * steps (chunks: readonly Buffer[], memory: ItemMemory): Generator<void, LanguageListing> {
    const n = this.size
    // Columns, keys read in place: a language-long array faulted in 45 ms at 1M in one step (ADRs 010, 014).
    const unsorted = new Column()
    for (let i = 0; i < n; i++) {
      unsorted.push(i)
      if ((i & STEP_MASK) === STEP_MASK) yield
    }
    const { columns: built } = this
    const dates = built[AT.dateOf] as Column
    const pks = built[AT.pkOf] as Column
    const order = yield * mergeSort(unsorted, (a, b) =>
      servedBefore(dates.get(a), pks.get(a), dates.get(b), pks.get(b)))

    const byCompany = yield * companyRanks(n, (rank, use) => this.eachCompany(order.get(rank), use))
    const columns = yield * writeColumns(
      n, this.largest, byCompany, rank => order.get(rank), (c, i) => (built[c] as Column).get(i)
    )
    return new LanguageListing(columns, null, chunks, memory)
  }

  /** Repeats included. */
  private eachCompany (i: number, use: (company: number) => void): void {
    const { companyIds, companyEnd } = this
    const to = companyEnd.get(i)
    for (let c = i === 0 ? 0 : companyEnd.get(i - 1); c < to; c++) use(companyIds.get(c))
  }
}

/**
 * Rank r's item is at `slotOf(r)`, its column c's number `valueAt(c, slot)`. With room for change files (ADR 031);
 * each column as narrow as `largest` (each column's largest number) lets it be, none narrower than `was`'s (ADR 016).
 */
export function * writeColumns (
  size: number, largest: readonly number[], byCompany: CompanyRanks,
  slotOf: (rank: number) => number, valueAt: (column: number, slot: number) => number,
  room = roomFor(size), was?: ItemColumns
): Generator<void, ItemColumns> {
  const wide = was === undefined ? [] : columnList(was)
  const arrays = COLUMN_NAMES.map((_, c) => sharedArray(kindFor(c, largest[c] ?? 0, wide[c]), size + room))
  for (let rank = 0; rank < size; rank++) {
    const slot = slotOf(rank)
    for (let c = 0; c < WIDTH; c++) (arrays[c] as View)[rank] = valueAt(c, slot)
    if ((rank & STEP_MASK) === STEP_MASK) yield
  }
  return new ItemColumns(columnsOf(arrays) as ColumnArrays, size, byCompany)
}

/** ADR 015. Filled in rank order, so each list is ascending; `last` counts a company twice on an item once. */
export function * companyRanks (
  size: number, eachCompany: (rank: number, use: (company: number) => void) => void
): Generator<void, CompanyRanks> {
  const slotOf = new Map<number, number>()
  const counts: number[] = []
  const last: number[] = []
  let rank = 0
  const count = (company: number): void => {
    const slot = slotOf.get(company)
    if (slot === undefined) {
      slotOf.set(company, counts.length)
      counts.push(1)
      last.push(rank)
    } else if (last[slot] !== rank) {
      counts[slot] = (counts[slot] as number) + 1
      last[slot] = rank
    }
  }
  for (; rank < size; rank++) {
    eachCompany(rank, count)
    if ((rank & STEP_MASK) === STEP_MASK) yield
  }
  const starts = sharedArray('u32', counts.length + 1)
  for (let slot = 0; slot < counts.length; slot++) {
    starts[slot + 1] = (starts[slot] as number) + (counts[slot] as number)
  }
  const ranks = sharedArray('u32', starts[counts.length] as number)
  const next = starts.slice(0, counts.length)
  last.fill(-1)
  const fill = (company: number): void => {
    const slot = slotOf.get(company) as number
    if (last[slot] === rank) return
    last[slot] = rank
    const at = next[slot] as number
    ranks[at] = rank
    next[slot] = at + 1
  }
  for (rank = 0; rank < size; rank++) {
    eachCompany(rank, fill)
    if ((rank & STEP_MASK) === STEP_MASK) yield
  }
  const table = IdSlots.sized(slotOf.size)
  for (const [company, slot] of slotOf) table.set(company, slot)
  return new CompanyRanks(table, starts, ranks)
}

/** Bottom-up, so it can pause, unlike TypedArray#sort. */
function * mergeSort (order: Column, before: (a: number, b: number) => boolean): Generator<void, Column> {
  const n = order.length
  let from = order
  // The first pass pushes, the others overwrite.
  let to = new Column()
  let merged = 0
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n)
      const hi = Math.min(lo + 2 * width, n)
      let i = lo
      let j = mid
      let k = lo
      while (i < mid && j < hi) {
        const a = from.get(i)
        const b = from.get(j)
        if (before(b, a)) { to.put(k++, b); j++ } else { to.put(k++, a); i++ }
        // Inside the merge: the last passes merge runs of half a language each.
        if (++merged > STEP_MASK) {
          merged = 0
          yield
        }
      }
      while (i < mid) to.put(k++, from.get(i++))
      while (j < hi) to.put(k++, from.get(j++))
    }
    const swap = from
    from = to
    to = swap
  }
  return from
}

export class SnapshotModelBuilder {
  private readonly languages = new Map<string, LanguageBuilder>()
  /** Chunks rendered here and parse threads' batches, numbered in order. */
  private readonly chunks: Buffer[] = []
  private readonly bytes = new ItemBytes(CHUNK_SIZE, full => this.chunks.push(full))

  /** So a language with no items still answers (count 0). */
  language (code: string): void {
    this.languageBuilder(code)
  }

  /** A repeated pk is not added: returns the first's index, else -1. */
  add (language: string, index: number, item: SnapshotItem): number {
    const builder = this.languageBuilder(language)
    const first = builder.firstIndexOfPk.get(item.pk)
    if (first !== undefined) return first
    builder.firstIndexOfPk.set(item.pk, index)
    const start = this.bytes.write(item)
    const row: number[] = []
    // After the write, which may have started a chunk.
    fillRow(row, item, { chunk: this.chunks.length, start, length: this.bytes.lastLength })
    builder.place(row, 0, 0, item.companies, 0, item.companies.length)
    return -1
  }

  /** Returns the chunk's number for `addRendered`. */
  chunk (bytes: Buffer): number {
    this.seal()
    return this.chunks.push(bytes) - 1
  }

  /** `add` for an item rendered on a parse thread. */
  addRendered (language: string, index: number, items: RenderedItems, i: number, chunk: number): number {
    const builder = this.languageBuilder(language)
    const pk = items.rows[i * WIDTH + AT.pkOf] as number
    const first = builder.firstIndexOfPk.get(pk)
    if (first !== undefined) return first
    builder.firstIndexOfPk.set(pk, index)
    builder.place(
      items.rows, i * WIDTH, chunk,
      items.companies, i === 0 ? 0 : items.companyEnd[i - 1] as number, items.companyEnd[i] as number
    )
    return -1
  }

  get languageCount (): number {
    return this.languages.size
  }

  build (info: SnapshotInfo): SnapshotModel {
    return runToEnd(this.steps(info))
  }

  /** ADR 006. */
  async buildInSlices (info: SnapshotInfo, sliceMs?: number): Promise<SnapshotModel> {
    return await runInSlices(this.steps(info), sliceMs)
  }

  /** A failed load's chunks retired now, so the budget is given back. */
  discard (): void {
    this.seal()
    this.languages.clear()
    new ItemMemory(this.chunks).retire()
  }

  private languageBuilder (code: string): LanguageBuilder {
    let builder = this.languages.get(code)
    if (builder === undefined) {
      builder = new LanguageBuilder()
      this.languages.set(code, builder)
    }
    return builder
  }

  private seal (): void {
    if (this.bytes.length > 0) this.chunks.push(this.bytes.take())
  }

  private * steps (info: SnapshotInfo): Generator<void, SnapshotModel> {
    this.seal()
    const listings = new Map<string, LanguageListing>()
    const memory = new ItemMemory(this.chunks)
    for (const [code, builder] of this.languages) listings.set(code, yield * builder.steps(this.chunks, memory))
    return new SnapshotModel(info, listings, memory)
  }
}
