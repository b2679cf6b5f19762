// A derived version's served order (rank → slot), as pieces of the orders before it rather than one array
// of the language's length: a change file of a thousand items on a million costs a few thousand pieces,
// not a 4 MB copy (docs/decisions/026). Past MAX_PIECES the order is written out flat once, in slices.
// A company list a change file concerned is one too (position → slot), pieces of the loaded list: an edit
// costs what it changes, not a copy of the company's list.

/** Where a run of ranks comes from: `source[start…]`, or the slots `start…` themselves when `source` is null. */
interface Piece {
  source: Uint32Array | null
  start: number
}

/** Pieces beyond which lookups and copies cost more than a flat array: the order is then flattened. */
export const MAX_PIECES = 8192
const STEP_MASK = 0x3fff

export class RankOrder {
  /**
   * @param pieces in rank order
   * @param ends piece i covers the ranks `ends[i - 1]` (0 for the first) to `ends[i]`
   */
  private constructor (private readonly pieces: readonly Piece[], private readonly ends: readonly number[]) {}

  /** The order of a loaded listing of `size` items: slot = rank. */
  static identity (size: number): RankOrder {
    return new RankOrder(size === 0 ? [] : [{ source: null, start: 0 }], size === 0 ? [] : [size])
  }

  /** A list as it is: one piece, `slots` itself (not copied). */
  static of (slots: Uint32Array): RankOrder {
    return slots.length === 0 ? RankOrder.identity(0) : new RankOrder([{ source: slots, start: 0 }], [slots.length])
  }

  get size (): number {
    return this.ends.at(-1) ?? 0
  }

  get pieceCount (): number {
    return this.pieces.length
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
    const { source, start } = this.pieces[p] as Piece
    const at = start + rank - (p === 0 ? 0 : this.ends[p - 1] as number)
    return source === null ? at : source[at] as number
  }

  /** The slots of ranks `from` to `to` (a page's), in a small array of their own. */
  slots (from: number, to: number): Uint32Array {
    const out = new Uint32Array(Math.max(0, to - from))
    let rank = from
    for (let p = from < to ? this.pieceOf(from) : this.pieces.length; rank < to; p++) {
      const { source, start } = this.pieces[p] as Piece
      const first = p === 0 ? 0 : this.ends[p - 1] as number
      const end = Math.min(to, this.ends[p] as number)
      const at = start + rank - first
      if (source === null) {
        for (let i = 0; i < end - rank; i++) out[rank - from + i] = at + i
      } else {
        out.set(source.subarray(at, at + end - rank), rank - from)
      }
      rank = end
    }
    return out
  }

  /**
   * The order with the ranks `removed` (ascending) left out and the slots `added` put in before the old
   * ranks `addedAt` (ascending, as `added` is in served order): the old pieces cut around them.
   */
  * edit (removed: readonly number[], added: Uint32Array, addedAt: readonly number[], maxPieces = MAX_PIECES): Generator<void, RankOrder> {
    const pieces: Piece[] = []
    const ends: number[] = []
    let size = 0
    const push = (source: Uint32Array | null, start: number, length: number): void => {
      if (length <= 0) return
      const last = pieces.at(-1)
      // A run that continues the last piece extends it.
      if (last !== undefined && last.source === source && last.start + (size - (ends.at(-2) ?? 0)) === start) {
        size += length
        ends[ends.length - 1] = size
        return
      }
      pieces.push({ source, start })
      size += length
      ends.push(size)
    }
    /** The old ranks `from` to `to`, as (parts of) the old pieces. */
    const copy = (from: number, to: number): void => {
      for (let rank = from, p = from < to ? this.pieceOf(from) : 0; rank < to; p++) {
        const { source, start } = this.pieces[p] as Piece
        const first = p === 0 ? 0 : this.ends[p - 1] as number
        const end = Math.min(to, this.ends[p] as number)
        push(source, start + rank - first, end - rank)
        rank = end
      }
    }
    let from = 0
    let r = 0
    let a = 0
    let steps = 0
    while (r < removed.length || a < added.length) {
      const nextRemoved = removed[r] ?? Infinity
      const nextAdded = addedAt[a] ?? Infinity
      if (nextAdded <= nextRemoved) {
        copy(from, nextAdded)
        from = nextAdded
        push(added, a++, 1)
      } else {
        copy(from, nextRemoved)
        from = nextRemoved + 1
        r++
      }
      if ((++steps & 0xfff) === 0) yield
    }
    copy(from, this.size)
    const order = new RankOrder(pieces, ends)
    return pieces.length > maxPieces ? yield * order.flattened() : order
  }

  /** The same order in one piece of its own: written out in slices. */
  private * flattened (): Generator<void, RankOrder> {
    const flat = new Uint32Array(this.size)
    for (let from = 0; from < flat.length; from += STEP_MASK + 1) {
      flat.set(this.slots(from, Math.min(flat.length, from + STEP_MASK + 1)), from)
      yield
    }
    return new RankOrder([{ source: flat, start: 0 }], [flat.length])
  }
}
