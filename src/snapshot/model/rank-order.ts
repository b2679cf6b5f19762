// A derived version's order (rank → slot), or a changed company list, as pieces of the ones before it: an
// edit costs what it changes, not a copy of a language's length (ADR 026). Flattened, in slices, past maxPiecesFor.

import { int32ArrayOf, uint32Array, uint32ArrayOf } from './shared-arrays.js'

/**
 * Pieces beyond which an order of `size` slots is written out flat: a piece's 12 bytes against a slot's 4; a
 * sixteenth keeps flat copies rare, at least 16. A cap of 8,192 flattened at the fourth change at 1M (ADR 026).
 */
export function maxPiecesFor (size: number): number {
  return Math.max(16, Math.floor(size / 16))
}

const STEP_MASK = 0x3fff
/** Pieces written (or edits made) between two yields of an edit: ~0.1 ms of work. */
const EDIT_STEP_MASK = 0xfff

/** The pieces of an order being written, a run that continues the last piece extending it. */
class PieceWriter {
  readonly sources: Uint32Array[] = []
  private readonly sourceIndex = new Map<Uint32Array, number>()
  /** Per piece: its source's index in `sources`, -1 for the slots themselves; where in it; where it ends. */
  readonly sourceOf: number[] = []
  readonly starts: number[] = []
  readonly ends: number[] = []
  size = 0
  /** Runs pushed, for the edit's yields. */
  pushed = 0

  /** `length` slots of `source` from `start`. */
  push (source: Uint32Array | null, start: number, length: number): void {
    if (length <= 0) return
    this.pushed++
    const index = source === null ? -1 : this.indexOf(source)
    const last = this.sourceOf.length - 1
    if (last >= 0 && this.sourceOf[last] === index &&
      (this.starts[last] as number) + (this.size - (this.ends[last - 1] ?? 0)) === start) {
      this.size += length
      this.ends[last] = this.size
      return
    }
    this.sourceOf.push(index)
    this.starts.push(start)
    this.size += length
    this.ends.push(this.size)
  }

  private indexOf (source: Uint32Array): number {
    let index = this.sourceIndex.get(source)
    if (index === undefined) {
      this.sourceIndex.set(source, index = this.sources.length)
      this.sources.push(source)
    }
    return index
  }

  /** The order written: its tables as arrays a serving thread can share (shared-arrays.ts). */
  order (): RankOrder {
    return RankOrder.of({
      sources: this.sources,
      sourceOf: int32ArrayOf(this.sourceOf),
      starts: uint32ArrayOf(this.starts),
      ends: uint32ArrayOf(this.ends)
    })
  }
}

/** A RankOrder's tables: what it is made of, and what a serving thread is sent (version-handoff.ts). */
export interface OrderTables {
  /** The arrays of slots the pieces are taken from. */
  sources: readonly Uint32Array[]
  /** Per piece: the index of its source, or -1: the slots `start…` themselves. */
  sourceOf: Int32Array
  /** Per piece: where in its source it starts. */
  starts: Uint32Array
  /** Piece i covers the ranks `ends[i - 1]` (0 for the first) to `ends[i]`. */
  ends: Uint32Array
}

export class RankOrder {
  private readonly sources: readonly Uint32Array[]
  private readonly sourceOf: Int32Array
  private readonly starts: Uint32Array
  private readonly ends: Uint32Array

  private constructor (tables: OrderTables) {
    ({ sources: this.sources, sourceOf: this.sourceOf, starts: this.starts, ends: this.ends } = tables)
  }

  /** An order from its tables (a thread's copy of the control's). */
  static of (tables: OrderTables): RankOrder {
    return new RankOrder(tables)
  }

  /** The order of a loaded listing of `size` items: slot = rank. */
  static identity (size: number): RankOrder {
    const out = new PieceWriter()
    out.push(null, 0, size)
    return out.order()
  }

  /** A list as it is: one piece, `slots` itself (not copied). */
  static list (slots: Uint32Array): RankOrder {
    const out = new PieceWriter()
    out.push(slots, 0, slots.length)
    return out.order()
  }

  /** What the order is made of. */
  get tables (): OrderTables {
    return { sources: this.sources, sourceOf: this.sourceOf, starts: this.starts, ends: this.ends }
  }

  get size (): number {
    return this.ends[this.ends.length - 1] ?? 0
  }

  get pieceCount (): number {
    return this.ends.length
  }

  /** The piece that holds `rank`. */
  private pieceOf (rank: number): number {
    let lo = 0
    let hi = this.ends.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.ends[mid] as number) <= rank) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  slotAt (rank: number): number {
    const p = this.pieceOf(rank)
    const source = this.sourceOf[p] as number
    const at = (this.starts[p] as number) + rank - (p === 0 ? 0 : this.ends[p - 1] as number)
    return source < 0 ? at : (this.sources[source] as Uint32Array)[at] as number
  }

  /** The slots of ranks `from` to `to` (a page's), in a small array of their own. */
  slots (from: number, to: number): Uint32Array {
    const out = new Uint32Array(Math.max(0, to - from))
    let rank = from
    for (let p = from < to ? this.pieceOf(from) : this.ends.length; rank < to; p++) {
      const source = this.sourceOf[p] as number
      const first = p === 0 ? 0 : this.ends[p - 1] as number
      const end = Math.min(to, this.ends[p] as number)
      const at = (this.starts[p] as number) + rank - first
      if (source < 0) {
        for (let i = 0; i < end - rank; i++) out[rank - from + i] = at + i
      } else {
        out.set((this.sources[source] as Uint32Array).subarray(at, at + end - rank), rank - from)
      }
      rank = end
    }
    return out
  }

  /**
   * The order without the ranks `removed` (ascending) and with `added` put in before the old ranks `addedAt`
   * (ascending): the old pieces cut around them, those left whole shared.
   */
  * edit (
    removed: readonly number[], added: Uint32Array, addedAt: readonly number[], maxPieces?: number
  ): Generator<void, RankOrder> {
    const out = new PieceWriter()
    let from = 0
    let r = 0
    let a = 0
    let steps = 0
    while (r < removed.length || a < added.length) {
      const nextRemoved = removed[r] ?? Infinity
      const nextAdded = addedAt[a] ?? Infinity
      if (nextAdded <= nextRemoved) {
        yield * this.copy(out, from, nextAdded)
        from = nextAdded
        out.push(added, a++, 1)
      } else {
        yield * this.copy(out, from, nextRemoved)
        from = nextRemoved + 1
        r++
      }
      if ((++steps & EDIT_STEP_MASK) === 0) yield
    }
    yield * this.copy(out, from, this.size)
    const order = out.order()
    return order.pieceCount > (maxPieces ?? maxPiecesFor(out.size)) ? yield * order.flattened() : order
  }

  /** The ranks `from` to `to` written to `out` as (parts of) this order's pieces, a yield every few thousand. */
  private * copy (out: PieceWriter, from: number, to: number): Generator<void, void> {
    for (let rank = from, p = from < to ? this.pieceOf(from) : 0; rank < to; p++) {
      const source = this.sourceOf[p] as number
      const first = p === 0 ? 0 : this.ends[p - 1] as number
      const end = Math.min(to, this.ends[p] as number)
      out.push(
        source < 0 ? null : this.sources[source] as Uint32Array, (this.starts[p] as number) + rank - first, end - rank
      )
      rank = end
      if ((out.pushed & EDIT_STEP_MASK) === 0) yield
    }
  }

  /** The same order in one piece of its own: written out in slices. */
  private * flattened (): Generator<void, RankOrder> {
    const flat = uint32Array(this.size)
    for (let from = 0; from < flat.length; from += STEP_MASK + 1) {
      flat.set(this.slots(from, Math.min(flat.length, from + STEP_MASK + 1)), from)
      yield
    }
    return RankOrder.list(flat)
  }
}
