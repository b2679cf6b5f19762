// Builds a SnapshotModel from validated items; only each item's bytes and sort and filter keys are kept.
import { IdSlots } from './id-slots.js'
import { float64Array, uint16Array, uint32Array } from './shared-arrays.js'
import type { SnapshotItem } from '../../schemas/snapshot.js'
import {
  CompanyRanks, ItemColumns, LanguageListing, SnapshotModel, roomFor, type SnapshotInfo
} from './snapshot-model.js'
import { STEP_MASK, runInSlices, runToEnd } from '../slices.js'
import { ItemMemory } from './item-memory.js'
import { ItemBytes, dateKey, servedBefore } from './item-bytes.js'

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

/** A parse thread's batch's columns (parse-batch.ts), item i at index i. */
export interface RenderedItems {
  /** Lengths without the comma after. */
  start: number[]
  length: number[]
  /** dateKey of the backdate. */
  date: number[]
  pk: number[]
  /** Item i's companies end at `companyEnd[i]`. */
  companyEnd: number[]
  companies: number[]
}

class LanguageBuilder {
  private readonly chunkOf = new Column()
  private readonly offsetOf = new Column()
  private readonly lengthOf = new Column()
  private readonly dates = new Column()
  private readonly pks = new Column()
  /** One column, no small array per item. */
  private readonly companyIds = new Column()
  private readonly companyEnd = new Column()
  /** pk → source index of its first item, to report repeats. */
  readonly firstIndexOfPk = new PkIndex()
  /** How wide the served lengths must be. */
  private longest = 0

  get size (): number {
    return this.pks.length
  }

  place (
    chunk: number, start: number, length: number, date: number, pk: number,
    companies: ArrayLike<number>, from: number, to: number
  ): void {
    if (length > this.longest) this.longest = length
    this.chunkOf.push(chunk)
    this.offsetOf.push(start)
    this.lengthOf.push(length)
    this.dates.push(date)
    this.pks.push(pk)
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
    const { dates, pks } = this
    const order = yield * mergeSort(unsorted, (a, b) =>
      servedBefore(dates.get(a), pks.get(a), dates.get(b), pks.get(b)))

    const byCompany = yield * companyRanks(n, (rank, use) => this.eachCompany(order.get(rank), use))
    const columns = yield * writeColumns(n, chunks.length, this.longest, byCompany, (rank, write) => {
      const i = order.get(rank)
      write(this.chunkOf.get(i), this.offsetOf.get(i), this.lengthOf.get(i), dates.get(i), pks.get(i))
    })
    return new LanguageListing(columns, null, chunks, memory)
  }

  /** Repeats included. */
  private eachCompany (i: number, use: (company: number) => void): void {
    const { companyIds, companyEnd } = this
    const to = companyEnd.get(i)
    for (let c = i === 0 ? 0 : companyEnd.get(i - 1); c < to; c++) use(companyIds.get(c))
  }
}

type WriteItem = (chunk: number, start: number, length: number, date: number, pk: number) => void

/** With room for change files (ADR 031); two bytes an entry where the numbers fit (ADR 016). */
export function * writeColumns (
  size: number, chunkCount: number, longest: number, byCompany: CompanyRanks,
  itemAt: (rank: number, write: WriteItem) => void, room = roomFor(size)
): Generator<void, ItemColumns> {
  const capacity = size + room
  const chunkOf = chunkCount <= 0x10000 ? uint16Array(capacity) : uint32Array(capacity)
  const startOf = uint32Array(capacity)
  const lengthOf = longest <= 0xffff ? uint16Array(capacity) : uint32Array(capacity)
  const dateOf = uint32Array(capacity)
  const pkOf = float64Array(capacity)
  let rank = 0
  const write: WriteItem = (chunk, start, length, date, pk) => {
    chunkOf[rank] = chunk
    startOf[rank] = start
    lengthOf[rank] = length
    dateOf[rank] = date
    pkOf[rank] = pk
  }
  for (; rank < size; rank++) {
    itemAt(rank, write)
    if ((rank & STEP_MASK) === STEP_MASK) yield
  }
  return new ItemColumns(chunkOf, startOf, lengthOf, dateOf, pkOf, size, byCompany)
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
  const starts = uint32Array(counts.length + 1)
  for (let slot = 0; slot < counts.length; slot++) {
    starts[slot + 1] = (starts[slot] as number) + (counts[slot] as number)
  }
  const ranks = uint32Array(starts[counts.length] as number)
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
    // After the write, which may have started a chunk.
    builder.place(
      this.chunks.length, start, this.bytes.lastLength, dateKey(item.backdate), item.pk,
      item.companies, 0, item.companies.length
    )
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
    const pk = items.pk[i] as number
    const first = builder.firstIndexOfPk.get(pk)
    if (first !== undefined) return first
    builder.firstIndexOfPk.set(pk, index)
    builder.place(
      chunk, items.start[i] as number, items.length[i] as number, items.date[i] as number, pk,
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
