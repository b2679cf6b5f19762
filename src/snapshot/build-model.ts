// Builds a SnapshotModel from validated items, one at a time, so both formats' loaders (format v1 and JSON
// Lines) feed the same code. Each item is serialized once, here, through the compiled
// ContentItem schema; only its bytes and its sort and filter keys are kept.
import fastJson from 'fast-json-stringify'
import { ContentItemSchema } from '../schemas/content-item.js'
import type { SnapshotItem } from '../schemas/snapshot.js'
import { LanguageListing, SnapshotModel, type SnapshotInfo } from './snapshot-model.js'
import { runInSlices, runToEnd } from './slices.js'
import { ItemMemory } from './item-memory.js'

// fast-json-stringify emits exactly the schema's properties: `companies` and unknown extras never leave.
const serializeItem = fastJson(ContentItemSchema as object) as (item: SnapshotItem) => string

// DRF's JSONRenderer writes non-ASCII as is but escapes these two, which break JavaScript string literals.
const LINE_SEPARATORS = /[\u2028\u2029]/g
function escapeSeparator (c: string): string {
  return c === '\u2028' ? '\\u2028' : '\\u2029'
}

/** What DRF's JSONRenderer would write for one item. */
export function renderItem (item: SnapshotItem): string {
  const json = serializeItem(item)
  return LINE_SEPARATORS.test(json) ? json.replace(LINE_SEPARATORS, escapeSeparator) : json
}

/** `YYYY-MM-DD` → YYYYMMDD, which sorts like the date. The item was validated as a calendar date. */
function dateKey (backdate: string): number {
  return Number(backdate.slice(0, 4)) * 10000 + Number(backdate.slice(5, 7)) * 100 + Number(backdate.slice(8, 10))
}

// Serialized items land in large chunks rather than one small Buffer or string each (less memory, less GC),
// and stay there: the served model reads them in place.
const CHUNK_SIZE = 4 * 1024 * 1024

/**
 * pk → a number, in many small Maps rather than one. One Map of a million entries doubles its table at
 * 524,288 entries in one go: 36 ms on a quiet core (bench/experiments/map-rehash.mjs), over 80 ms beside a
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
 * page faults (BENCHMARKS.md, "Where the 1M stall goes"). A block grows to 65,536 entries and stays.
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
}

class LanguageBuilder {
  private readonly chunks: Buffer[] = []
  private chunk: Buffer = Buffer.alloc(0)
  private used = 0
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

  constructor (readonly language: string) {}

  get size (): number {
    return this.pks.length
  }

  add (item: SnapshotItem): void {
    const json = renderItem(item)
    // Each item is followed by the comma that separates it from the next one in a page, so a page's
    // items go out as views of this memory, a comma included with every item but the last
    // (snapshot-model.ts, PageItems). A UTF-16 code unit is at most 3 UTF-8 bytes: check the cheap
    // bound before measuring exactly.
    let length = json.length * 3 + 1
    if (this.used + length > this.chunk.length) {
      length = Buffer.byteLength(json) + 1
      if (this.used + length > this.chunk.length) {
        // The few bytes left at the end of a full chunk are not worth a copy of the chunk.
        this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_SIZE, length))
        this.chunks.push(this.chunk)
        this.used = 0
      }
    }
    const written = this.chunk.write(json, this.used)
    this.chunk[this.used + written] = 0x2c // ','
    this.chunkOf.push(this.chunks.length - 1)
    this.offsetOf.push(this.used)
    this.lengthOf.push(written)
    this.used += written + 1
    this.dates.push(dateKey(item.backdate))
    this.pks.push(item.pk)
    for (const company of item.companies) this.companyIds.push(company)
    this.companyEnd.push(this.companyIds.length)
  }

  /**
   * Closes the chunk being written: a chunk is rarely full when the items run out, so only what it holds
   * is kept, in a buffer of its own (never a slice of Node's shared pool, which could not be moved to
   * another thread). The next item starts a new chunk.
   */
  private seal (): void {
    if (this.chunks.length > 0 && this.used < this.chunk.length) {
      const kept = Buffer.allocUnsafeSlow(this.used)
      this.chunk.copy(kept, 0, 0, this.used)
      this.chunks[this.chunks.length - 1] = kept
    }
    this.chunk = Buffer.alloc(0)
    this.used = 0
  }

  /**
   * The steps of building the served listing, yielding every few thousand items so that a caller can give
   * the event loop a turn (buildInSlices): at a million items the whole build is about a second.
   */
  * steps (memory: ItemMemory): Generator<void, LanguageListing> {
    const n = this.size
    // The sort's keys, flat: the comparator runs n log n times.
    const dates = new Uint32Array(n)
    const pks = new Float64Array(n)
    const unsorted = new Uint32Array(n)
    for (let i = 0; i < n; i++) {
      dates[i] = this.dates.get(i)
      pks[i] = this.pks.get(i)
      unsorted[i] = i
      if ((i & STEP_MASK) === STEP_MASK) yield
    }
    // Newest first; the same day, higher pk first. pks are unique, so the order is total.
    const order = yield * mergeSort(unsorted, (a, b) => (dates[a] as number) > (dates[b] as number) ||
      (dates[a] === dates[b] && (pks[a] as number) > (pks[b] as number)))

    // Items stay in the chunks they were written to; only where each one is goes into served order.
    const chunkOf = new Uint32Array(n)
    const startOf = new Uint32Array(n)
    const lengthOf = new Uint32Array(n)
    const lists = new Map<number, number[]>()
    const { companyIds, companyEnd } = this
    for (let rank = 0; rank < n; rank++) {
      const i = order[rank] as number
      chunkOf[rank] = this.chunkOf.get(i)
      startOf[rank] = this.offsetOf.get(i)
      lengthOf[rank] = this.lengthOf.get(i)
      const end = companyEnd.get(i)
      for (let c = i === 0 ? 0 : companyEnd.get(i - 1); c < end; c++) {
        const company = companyIds.get(c)
        const list = lists.get(company)
        if (list === undefined) lists.set(company, [rank])
        // Ranks arrive ascending, so a company listed twice on one item shows as a repeat of the last rank.
        else if (list[list.length - 1] !== rank) list.push(rank)
      }
      if ((rank & STEP_MASK) === STEP_MASK) yield
    }
    const byCompany = new Map<number, Uint32Array>()
    let copied = 0
    for (const [company, list] of lists) {
      byCompany.set(company, Uint32Array.from(list))
      copied += list.length
      if (copied > STEP_MASK) {
        copied = 0
        yield
      }
    }
    this.seal()
    const chunks = this.chunks
    memory.hold(chunks)
    return new LanguageListing(this.language, { chunks, chunkOf, startOf, lengthOf, memory }, byCompany)
  }
}

/** Items (or merged elements) between two points where a build may pause: a few milliseconds of work. */
const STEP_MASK = 0x3fff

/**
 * A bottom-up merge sort of `order` by `before`, yielding every STEP_MASK + 1 comparisons. Unlike
 * TypedArray#sort it can pause, so sorting a million items never holds the event loop for long.
 */
function * mergeSort (order: Uint32Array<ArrayBuffer>, before: (a: number, b: number) => boolean): Generator<void, Uint32Array<ArrayBuffer>> {
  const n = order.length
  let from = order
  let to = new Uint32Array(n)
  let merged = 0
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n)
      const hi = Math.min(lo + 2 * width, n)
      let i = lo
      let j = mid
      let k = lo
      while (i < mid && j < hi) {
        const a = from[i] as number
        const b = from[j] as number
        if (before(b, a)) { to[k++] = b; j++ } else { to[k++] = a; i++ }
        // Inside the merge, not between merges: the last passes merge runs of half a language each.
        if (++merged > STEP_MASK) {
          merged = 0
          yield
        }
      }
      while (i < mid) to[k++] = from[i++] as number
      while (j < hi) to[k++] = from[j++] as number
    }
    const swap = from
    from = to
    to = swap
  }
  return from
}

export class SnapshotModelBuilder {
  private readonly languages = new Map<string, LanguageBuilder>()

  /** Declares a language, so one listed with no items still answers (with count 0). */
  language (code: string): void {
    if (!this.languages.has(code)) this.languages.set(code, new LanguageBuilder(code))
  }

  /**
   * Adds a schema-valid item found at `index` of its language in the source. When an earlier item of the
   * language has the same pk, the item is not added and that item's index is returned; otherwise -1.
   */
  add (language: string, index: number, item: SnapshotItem): number {
    this.language(language)
    const builder = this.languages.get(language) as LanguageBuilder
    const first = builder.firstIndexOfPk.get(item.pk)
    if (first !== undefined) return first
    builder.firstIndexOfPk.set(item.pk, index)
    builder.add(item)
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

  private * steps (info: SnapshotInfo): Generator<void, SnapshotModel> {
    const listings = new Map<string, LanguageListing>()
    const memory = new ItemMemory()
    for (const [code, builder] of this.languages) listings.set(code, yield * builder.steps(memory))
    return new SnapshotModel(info, listings, memory)
  }
}
