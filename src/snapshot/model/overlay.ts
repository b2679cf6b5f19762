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
    const gone = mergeRanks([this.removed, arrayOf(removedRanks.map(rank => this.positionOf(rank)))])
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

  /** Bases and removed merged as numbers (ADR 027); added slots sorted by `before`. */
  static union (lists: readonly Overlay[], before: SlotOrder): Overlay {
    const base = mergeRanks(lists.map(list => list.ranks()))
    const removed = mergeRanks(lists.map(list => arrayOf([...list.removed].map(p => list.rankAt(p)))))
    const slots = [...new Set(lists.flatMap(list => [...list.added]))].sort((a, b) => before(a, b) ? -1 : 1)
    const at = slots.map(slot => firstNotBefore(base.length, p => before(base[p] as number, slot)))
    const union = new Overlay(base, base.length)
    return union.with(arrayOf([...removed].map(rank => lowerBound(base, rank))), slots, at)
  }
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

/** Pairwise, smallest first: each rank copied O(log k) times. */
export function mergeRanks (lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 0) return EMPTY
  const queue = [...lists].sort((a, b) => a.length - b.length)
  while (queue.length > 1) {
    const merged = mergeTwo(queue.shift() as Uint32Array, queue.shift() as Uint32Array)
    let i = 0
    while (i < queue.length && (queue[i] as Uint32Array).length < merged.length) i++
    queue.splice(i, 0, merged)
  }
  return queue[0] as Uint32Array
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
