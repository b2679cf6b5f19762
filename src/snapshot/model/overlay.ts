// A flat listing's list less what change files removed, with what they added: a change costs what it changes (ADR 031).
import { uint32ArrayOf } from './shared-arrays.js'

export type SlotOrder = (a: number, b: number) => boolean

/** Shared: most lists a change concerns lose or gain on one side only. */
const EMPTY = new Uint32Array(0)

/** Shareable with serving threads. */
function arrayOf (values: readonly number[]): Uint32Array {
  return values.length === 0 ? EMPTY : uint32ArrayOf(values)
}

export function firstNotBefore (count: number, isBefore: (place: number) => boolean): number {
  let lo = 0
  let hi = count
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (isBefore(mid)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Numbers inline, on the page path (ADR 027). */
function lowerBound (values: ArrayLike<number>, value: number, from = 0, to = values.length): number {
  let lo = from
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((values[mid] as number) < value) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class Overlay {
  readonly size: number
  /** If not, a page is `base` read where it is. */
  readonly edited: boolean

  /**
   * @param base null: every rank below `baseSize`
   * @param removed base positions, ascending
   * @param addedAt per added slot, the base position it comes before (`baseSize`: after them all)
   * @param baseFrom a company's stretch of one array (ADR 015), no view made per page
   */
  constructor (
    readonly base: Uint32Array | null,
    readonly baseSize: number,
    readonly removed: Uint32Array = EMPTY,
    readonly added: Uint32Array = EMPTY,
    readonly addedAt: Uint32Array = EMPTY,
    readonly addedPlace: Uint32Array = EMPTY,
    readonly baseFrom = 0
  ) {
    this.size = baseSize - removed.length + added.length
    this.edited = removed.length > 0 || added.length > 0
  }

  static over (base: Uint32Array): Overlay {
    return new Overlay(base, base.length)
  }

  static within (base: Uint32Array, from: number, to: number): Overlay {
    return new Overlay(base, to - from, EMPTY, EMPTY, EMPTY, EMPTY, from)
  }

  /** A view; none for a whole list, whose ranks are its positions. */
  ranks (): Uint32Array {
    return this.base === null ? EMPTY : this.base.subarray(this.baseFrom, this.baseFrom + this.baseSize)
  }

  private rankAt (p: number): number {
    return this.base === null ? p : this.base[this.baseFrom + p] as number
  }

  private positionOf (rank: number): number {
    const { base, baseFrom, baseSize } = this
    return base === null ? Math.min(rank, baseSize) : lowerBound(base, rank, baseFrom, baseFrom + baseSize) - baseFrom
  }

  holds (slot: number, before: SlotOrder): boolean {
    const p = this.positionOf(slot)
    if (p < this.baseSize && this.rankAt(p) === slot) return this.removed[lowerBound(this.removed, p)] !== p
    const { added } = this
    return added[firstNotBefore(added.length, a => before(added[a] as number, slot))] === slot
  }

  /** Two binary searches, then a walk. */
  slots (from: number, to: number): Uint32Array {
    const out = new Uint32Array(Math.max(0, Math.min(to, this.size) - from))
    if (out.length === 0) return out
    const { added, addedAt, removed } = this
    let a = lowerBound(this.addedPlace, from)
    // removed[i] - i base entries are kept before removed[i]: skip those ≤ kept.
    const kept = from - a
    let lo = 0
    let hi = removed.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((removed[mid] as number) - mid <= kept) lo = mid + 1
      else hi = mid
    }
    let r = lo
    let p = kept + r
    for (let n = 0; n < out.length;) {
      if (a < added.length && (addedAt[a] as number) <= p) {
        out[n++] = added[a++] as number
      } else if (removed[r] === p) {
        r++
        p++
      } else {
        out[n++] = this.rankAt(p++)
      }
    }
    return out
  }

  /** Arrays as long as the changes; `added` in served order, each before its rank in `beforeRanks`. */
  edit (
    removedRanks: readonly number[], dropped: ReadonlySet<number>, added: readonly number[],
    beforeRanks: readonly number[], before: SlotOrder
  ): Overlay {
    const keptSlots: number[] = []
    const keptAt: number[] = []
    for (let i = 0; i < this.added.length; i++) {
      const slot = this.added[i] as number
      if (dropped.has(slot)) continue
      keptSlots.push(slot)
      keptAt.push(this.addedAt[i] as number)
    }
    const [slots, at] = mergeAdded(keptSlots, keptAt, added, beforeRanks.map(rank => this.positionOf(rank)), before)
    const gone = mergeTwo(this.removed, arrayOf(removedRanks.map(rank => this.positionOf(rank))))
    return this.with(gone, slots, at)
  }

  private with (removed: Uint32Array, added: readonly number[], addedAt: readonly number[]): Overlay {
    const places = new Array<number>(added.length)
    for (let i = 0, r = 0; i < added.length; i++) {
      while (r < removed.length && (removed[r] as number) < (addedAt[i] as number)) r++
      places[i] = i + (addedAt[i] as number) - r
    }
    return new Overlay(
      this.base, this.baseSize, removed, arrayOf(added), arrayOf(addedAt), arrayOf(places), this.baseFrom
    )
  }

  /**
   * The union of company lists of one listing (each with its base of ranks below `size`), linear in the ranks it reads
   * (ADR 037): their bases less the ranks a change removed (gone from every list that had them), then their added
   * slots, each once, placed by `before`. The union is this thread's own: no shared memory.
   */
  static union (lists: readonly Overlay[], size: number, before: SlotOrder): Overlay {
    let read = 0
    for (const list of lists) read += list.baseSize
    // Two lists merge in one pass; a few ranks are sorted rather than the whole listing's bits read.
    const base = lists.length === 2
      ? twoUnion(lists[0] as Overlay, lists[1] as Overlay)
      : read * 32 < size ? sortedUnion(lists, read) : bitUnion(lists, size)
    const added = new Set<number>()
    for (const list of lists) for (const slot of list.added) added.add(slot)
    const union = Overlay.over(base)
    if (added.size === 0) return union
    const slots = [...added].sort((a, b) => before(a, b) ? -1 : 1)
    const at = slots.map(slot => firstNotBefore(base.length, p => before(base[p] as number, slot)))
    return union.with(EMPTY, slots, at)
  }

  /** The base ranks it removed. */
  removedRanks (): Uint32Array {
    if (this.removed.length === 0) return EMPTY
    const ranks = new Uint32Array(this.removed.length)
    for (let i = 0; i < ranks.length; i++) ranks[i] = this.rankAt(this.removed[i] as number)
    return ranks
  }
}

/** Bits over a listing's ranks, reused by every union of the thread, and left all zero by each. */
let rankBits = new Int32Array(1024)

function bitCount (word: number): number {
  let x = word - ((word >>> 1) & 0x55555555)
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333)
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}

/** Each rank set as a bit, the removed ones cleared, the bits read back in order (and cleared as read). */
function bitUnion (lists: readonly Overlay[], size: number): Uint32Array {
  const words = (size + 31) >>> 5
  if (rankBits.length < words) rankBits = new Int32Array(Math.max(words, 2 * rankBits.length))
  const bits = rankBits
  let low = words
  let high = -1
  for (const list of lists) {
    const ranks = list.ranks()
    if (ranks.length === 0) continue
    // Ascending: the first and the last bound the words touched.
    low = Math.min(low, (ranks[0] as number) >>> 5)
    high = Math.max(high, (ranks[ranks.length - 1] as number) >>> 5)
    for (let i = 0; i < ranks.length; i++) {
      const rank = ranks[i] as number
      bits[rank >>> 5] = (bits[rank >>> 5] as number) | (1 << (rank & 31))
    }
  }
  for (const list of lists) {
    for (const rank of list.removedRanks()) bits[rank >>> 5] = (bits[rank >>> 5] as number) & ~(1 << (rank & 31))
  }
  let count = 0
  for (let w = low; w <= high; w++) count += bitCount(bits[w] as number)
  const out = new Uint32Array(count)
  let n = 0
  for (let w = low; w <= high; w++) {
    let word = bits[w] as number
    if (word === 0) continue
    bits[w] = 0
    const first = w << 5
    while (word !== 0) {
      const bit = word & -word
      out[n++] = first + 31 - Math.clz32(bit)
      word ^= bit
    }
  }
  return out
}

/** The same for two lists: merged, less the removed ones, in an array of its own (never a view of a list's). */
function twoUnion (a: Overlay, b: Overlay): Uint32Array {
  const ranksA = a.ranks()
  const ranksB = b.ranks()
  const merged = ranksA.length === 0 || ranksB.length === 0
    ? (ranksA.length === 0 ? ranksB : ranksA).slice()
    : mergeTwo(ranksA, ranksB)
  const gone = mergeTwo(a.removedRanks(), b.removedRanks())
  if (gone.length === 0) return merged
  // Each rank removed is in its list's base: in `merged`.
  const out = new Uint32Array(merged.length - gone.length)
  for (let i = 0, g = 0, n = 0; i < merged.length; i++) {
    const rank = merged[i] as number
    if (rank === gone[g]) g++
    else out[n++] = rank
  }
  return out
}

/** The same for a few ranks: gathered, sorted, each once, less the removed ones. */
function sortedUnion (lists: readonly Overlay[], read: number): Uint32Array {
  const ranks = new Uint32Array(read)
  let n = 0
  for (const list of lists) {
    ranks.set(list.ranks(), n)
    n += list.baseSize
  }
  ranks.sort()
  const gone = new Set<number>()
  for (const list of lists) for (const rank of list.removedRanks()) gone.add(rank)
  let kept = 0
  for (let i = 0; i < ranks.length; i++) {
    const rank = ranks[i] as number
    if ((kept > 0 && ranks[kept - 1] === rank) || gone.has(rank)) continue
    ranks[kept++] = rank
  }
  return ranks.slice(0, kept)
}

/** A company no item names. */
export const NO_ITEMS = new Overlay(EMPTY, 0)

/** Each slot once. */
function mergeAdded (
  a: readonly number[], aAt: readonly number[], b: readonly number[], bAt: readonly number[], before: SlotOrder
): [number[], number[]] {
  const slots: number[] = []
  const at: number[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    const x = a[i]
    const y = b[j]
    if (x !== undefined && (y === undefined || x === y || before(x, y))) {
      slots.push(x); at.push(aAt[i++] as number)
      if (x === y) j++
    } else {
      slots.push(y as number); at.push(bAt[j++] as number)
    }
  }
  return [slots, at]
}

/** Numbers compared inline, which V8 keeps fast (ADR 027). */
function mergeTwo (a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0) return b
  if (b.length === 0) return a
  const out = new Uint32Array(a.length + b.length)
  let i = 0
  let j = 0
  let n = 0
  while (i < a.length && j < b.length) {
    const x = a[i] as number
    const y = b[j] as number
    if (x === y) {
      out[n++] = x; i++; j++
    } else if (x < y) {
      out[n++] = x; i++
    } else {
      out[n++] = y; j++
    }
  }
  while (i < a.length) out[n++] = a[i++] as number
  while (j < b.length) out[n++] = b[j++] as number
  return n === out.length ? out : out.slice(0, n)
}
