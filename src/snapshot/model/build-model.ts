// Builds a SnapshotModel from validated items, one at a time, so both formats' loaders (format v1 and JSON
// Lines) feed the same code. Each item is serialized once (item-bytes.ts), here or on a parse thread; only
// its bytes and its sort and filter keys are kept.
import { IdSlots } from './id-slots.js'
import { float64Array, uint16Array, uint32Array } from './shared-arrays.js'
import type { SnapshotItem } from '../../schemas/snapshot.js'
import { CompanyRanks, LanguageListing, SnapshotModel, type SnapshotInfo } from './snapshot-model.js'
import { runInSlices, runToEnd } from '../slices.js'
import { ItemMemory } from './item-memory.js'
import { ItemBytes, dateKey, servedBefore } from './item-bytes.js'

// Items serialized here land in chunks of this size, and stay there: the served model reads them in place.
const CHUNK_SIZE = 4 * 1024 * 1024

/**
 * pk → a number, in many small Maps rather than one. One Map of a million entries doubles its table at
 * 524,288 entries in one go: 36 ms on a quiet core (docs/decisions/013), over 80 ms beside a
 * loaded server, one of the longest stalls of a reload. 256 Maps grow in steps 256 times smaller.
 */
class PkIndex {
  private readonly shards = Array.from({ length: 256 }, () => new Map<number, number>())

  get (pk: number): number | undefined {
    return this.shard(pk).get(pk)
  }

  set (pk: number, index: number): void {
    this.shard(pk).set(pk, index)
  }

  /** pks are safe integers, negative ones too. */
  private shard (pk: number): Map<number, number> {
    return this.shards[((pk % 256) + 256) % 256] as Map<number, number>
  }
}

const BLOCK_SHIFT = 16
const BLOCK = 1 << BLOCK_SHIFT
const BLOCK_MASK = BLOCK - 1

/**
 * An append-only column of numbers, in blocks that never move. One JS array grows by copying itself into a
 * new one half as large again, and the builder's per-item arrays all grow at the same item: at a million
 * items one `add` allocated and copied about 45 MB, a 131 ms stall of the main thread, nearly all of it
 * page faults (docs/decisions/014). A block grows to 65,536 entries and stays.
 * Blocks are JS arrays, in V8's heap, not typed arrays: the C allocator kept freed typed-array blocks'
 * memory after the build (about 50 MB more settled RSS at 1M), where V8 gives its pages back.
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

  /** Writes at `index`: one already pushed, or the next one (a push). */
  put (index: number, value: number): void {
    if (index === this.length) this.push(value)
    else (this.blocks[index >>> BLOCK_SHIFT] as number[])[index & BLOCK_MASK] = value
  }
}

/** Where a batch's items are: columns of a parse thread's batch (parse-batch.ts), item i at index i. */
export interface RenderedItems {
  /** Where each item's JSON starts in the batch's bytes, and its length (without the comma after it). */
  start: number[]
  length: number[]
  /** dateKey of its backdate. */
  date: number[]
  pk: number[]
  /** Every item's company ids in one column: item i's end at `companyEnd[i]`, its start at the end before. */
  companyEnd: number[]
  companies: number[]
}

/** One language's items as they arrive: where each one's bytes are, and its keys; nothing copied. */
class LanguageBuilder {
  private readonly chunkOf = new Column()
  private readonly offsetOf = new Column()
  private readonly lengthOf = new Column()
  private readonly dates = new Column()
  private readonly pks = new Column()
  /** Every item's company ids in one column (no small array per item): item i's end at `companyEnd[i]`. */
  private readonly companyIds = new Column()
  private readonly companyEnd = new Column()
  /** pk → source index of the first item that had it, to report repeats. */
  readonly firstIndexOfPk = new PkIndex()
  /** The longest item placed: how wide the served lengths must be. */
  private longest = 0

  constructor (readonly language: string) {}

  get size (): number {
    return this.pks.length
  }

  /** An item whose JSON is in chunk `chunk` at `start`, `length` bytes; its companies `companies[from..to)`. */
  place (chunk: number, start: number, length: number, date: number, pk: number, companies: ArrayLike<number>, from: number, to: number): void {
    if (length > this.longest) this.longest = length
    this.chunkOf.push(chunk)
    this.offsetOf.push(start)
    this.lengthOf.push(length)
    this.dates.push(date)
    this.pks.push(pk)
    for (let c = from; c < to; c++) this.companyIds.push(companies[c] as number)
    this.companyEnd.push(this.companyIds.length)
  }

  /**
   * The steps of building the served listing, yielding every few thousand items so that a caller can give
   * the event loop a turn (buildInSlices): at a million items the whole build is about a second.
   */
  * steps (chunks: readonly Buffer[], memory: ItemMemory): Generator<void, LanguageListing> {
    const n = this.size
    // The sort's orders are Columns too, and its keys are read where they are. An array of a language's
    // length, made in one step, faults in all its pages at once: three of them (the keys, flat, and the
    // order) held the loop 45 ms at 1M. As typed arrays they came from the C allocator instead, after the
    // parse threads had freed blocks large enough to raise its threshold for giving a block its own
    // mapping, and left holes resident under the model's columns (20 MB of settled RSS at 1M:
    // docs/decisions/010; "the rest" of bench/experiments/load-alone.ts). Blocks in V8's heap do neither.
    const unsorted = new Column()
    for (let i = 0; i < n; i++) {
      unsorted.push(i)
      if ((i & STEP_MASK) === STEP_MASK) yield
    }
    const { dates, pks } = this
    const order = yield * mergeSort(unsorted, (a, b) => servedBefore(dates.get(a), pks.get(a), dates.get(b), pks.get(b)))

    // Items stay in the chunks they were written to; only where each one is goes into served order.
    // Two bytes an item where the numbers fit, as they do unless a snapshot has items over 64 KiB or
    // 65,536 chunks (256 GiB): 4 MB less at 1M items.
    const chunkOf = chunks.length <= 0x10000 ? uint16Array(n) : uint32Array(n)
    const startOf = uint32Array(n)
    const lengthOf = this.longest <= 0xffff ? uint16Array(n) : uint32Array(n)
    // Each rank's keys too: what a change file needs (slot-space.ts), 12 bytes an item, kept rather than
    // read back out of the rendered items (3.5 s at 1M, in slices beside the requests).
    const keys = { dateOf: uint32Array(n), pkOf: float64Array(n) }
    for (let rank = 0; rank < n; rank++) {
      const i = order.get(rank)
      chunkOf[rank] = this.chunkOf.get(i)
      startOf[rank] = this.offsetOf.get(i)
      lengthOf[rank] = this.lengthOf.get(i)
      keys.dateOf[rank] = dates.get(i)
      keys.pkOf[rank] = pks.get(i)
      if ((rank & STEP_MASK) === STEP_MASK) yield
    }
    const byCompany = yield * this.companyRanks(order)
    return new LanguageListing(this.language, { chunks, chunkOf, startOf, lengthOf, memory }, byCompany, null, keys)
  }

  /**
   * Every company's ranks in one array (CompanyRanks), in two passes and no list that grows: the first
   * counts each company's items and gives it its stretch, the second walks the ranks in order and fills
   * the stretches, so each comes out ascending. A company listed twice on one item counts once: each slot
   * remembers the last item (then rank) it took, a constant cost however many companies an item lists.
   */
  private * companyRanks (order: Column): Generator<void, CompanyRanks> {
    const n = order.length
    const slotOf = new Map<number, number>()
    const counts: number[] = []
    const last: number[] = []
    let i = 0
    const count = (company: number): void => {
      const slot = slotOf.get(company)
      if (slot === undefined) {
        slotOf.set(company, counts.length)
        counts.push(1)
        last.push(i)
      } else if (last[slot] !== i) {
        counts[slot] = (counts[slot] as number) + 1
        last[slot] = i
      }
    }
    for (; i < n; i++) {
      this.eachCompany(i, count)
      if ((i & STEP_MASK) === STEP_MASK) yield
    }
    const starts = uint32Array(counts.length + 1)
    for (let slot = 0; slot < counts.length; slot++) starts[slot + 1] = (starts[slot] as number) + (counts[slot] as number)
    const ranks = uint32Array(starts[counts.length] as number)
    const next = starts.slice(0, counts.length)
    last.fill(-1)
    let rank = 0
    const fill = (company: number): void => {
      const slot = slotOf.get(company) as number
      if (last[slot] === rank) return
      last[slot] = rank
      const at = next[slot] as number
      ranks[at] = rank
      next[slot] = at + 1
    }
    for (; rank < n; rank++) {
      this.eachCompany(order.get(rank), fill)
      if ((rank & STEP_MASK) === STEP_MASK) yield
    }
    const table = IdSlots.sized(slotOf.size)
    for (const [company, slot] of slotOf) table.set(company, slot)
    return new CompanyRanks(table, starts, ranks)
  }

  /** Calls `use` with each company item `i` lists, repeats included. */
  private eachCompany (i: number, use: (company: number) => void): void {
    const { companyIds, companyEnd } = this
    const to = companyEnd.get(i)
    for (let c = i === 0 ? 0 : companyEnd.get(i - 1); c < to; c++) use(companyIds.get(c))
  }
}

/** Items (or merged elements) between two points where a build may pause: a few milliseconds of work. */
const STEP_MASK = 0x3fff

/**
 * A bottom-up merge sort of `order` by `before`, yielding every STEP_MASK + 1 comparisons. Unlike
 * TypedArray#sort it can pause, so sorting a million items never holds the event loop for long.
 */
function * mergeSort (order: Column, before: (a: number, b: number) => boolean): Generator<void, Column> {
  const n = order.length
  let from = order
  // Written in order, from 0 up, in every pass: the first pass pushes, the others overwrite.
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
        // Inside the merge, not between merges: the last passes merge runs of half a language each.
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
  /** Every language's items' bytes: the chunks rendered here, and parse threads' batches, numbered in order. */
  private readonly chunks: Buffer[] = []
  private readonly bytes = new ItemBytes(CHUNK_SIZE, full => this.chunks.push(full))

  /** Declares a language, so one listed with no items still answers (with count 0). */
  language (code: string): void {
    this.languageBuilder(code)
  }

  /**
   * Adds a schema-valid item found at `index` of its language in the source. When an earlier item of the
   * language has the same pk, the item is not added and that item's index is returned; otherwise -1.
   */
  add (language: string, index: number, item: SnapshotItem): number {
    const builder = this.languageBuilder(language)
    const first = builder.firstIndexOfPk.get(item.pk)
    if (first !== undefined) return first
    builder.firstIndexOfPk.set(item.pk, index)
    const start = this.bytes.write(item)
    // After the write, which may have started a chunk: the item is in the one being written.
    builder.place(this.chunks.length, start, this.bytes.lastLength, dateKey(item.backdate), item.pk, item.companies, 0, item.companies.length)
    return -1
  }

  /** Takes a batch's rendered bytes (kept as they are, one chunk); returns their number for `addRendered`. */
  chunk (bytes: Buffer): number {
    this.seal()
    return this.chunks.push(bytes) - 1
  }

  /**
   * Adds item `i` of a batch rendered into chunk `chunk`, found at `index` of its language in the source:
   * `add`, for an item checked and rendered on a parse thread. The same return.
   */
  addRendered (language: string, index: number, items: RenderedItems, i: number, chunk: number): number {
    const builder = this.languageBuilder(language)
    const pk = items.pk[i] as number
    const first = builder.firstIndexOfPk.get(pk)
    if (first !== undefined) return first
    builder.firstIndexOfPk.set(pk, index)
    builder.place(chunk, items.start[i] as number, items.length[i] as number, items.date[i] as number, pk, items.companies, i === 0 ? 0 : items.companyEnd[i - 1] as number, items.companyEnd[i] as number)
    return -1
  }

  /** Languages declared or named by an item so far. */
  get languageCount (): number {
    return this.languages.size
  }

  /** The model, in one go (a small file, or tests). */
  build (info: SnapshotInfo): SnapshotModel {
    return runToEnd(this.steps(info))
  }

  /**
   * The model, with a turn of the event loop after every `sliceMs` of work: a service building a large
   * snapshot beside the one it serves keeps answering (sorting and indexing a million items is ~1 s).
   */
  async buildInSlices (info: SnapshotInfo, sliceMs?: number): Promise<SnapshotModel> {
    return await runInSlices(this.steps(info), sliceMs)
  }

  /**
   * A load that failed: its rendered chunks are retired as a replaced model's are (item-memory.ts), so that
   * the budget it reached is given back now, and nothing built can be used after.
   */
  discard (): void {
    this.seal()
    this.languages.clear()
    new ItemMemory(this.chunks).retire()
  }

  private languageBuilder (code: string): LanguageBuilder {
    let builder = this.languages.get(code)
    if (builder === undefined) {
      builder = new LanguageBuilder(code)
      this.languages.set(code, builder)
    }
    return builder
  }

  /** Closes the chunk being written here, if any: the next item starts a new one. */
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
