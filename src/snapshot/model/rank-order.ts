// A derived version's served order (rank → slot), as pieces of the orders before it rather than one array
// of the language's length: a change file of a thousand items on a million costs a few thousand pieces,
// not a 4 MB copy (docs/decisions/026). Before the pieces would cost as much memory as the flat array, the
// order is written out flat, in slices (maxPiecesFor). A company list a change file concerned is one
// too (position → slot), pieces of the loaded list: an edit costs what it changes, not a copy of the list.

/** Where a run of ranks comes from: `source[start…]`, or the slots `start…` themselves when `source` is null. */
interface Piece {
  readonly source: Uint32Array | null
  readonly start: number
}

/**
 * Pieces beyond which an order of `size` slots is written out flat: a piece costs 56 bytes of heap (an
 * object of two fields and its place in two arrays, measured) against a slot's 4, so from one piece in 14
 * slots the flat array is smaller; a sixteenth leaves room. Never fewer than 16: a small order's pieces
 * cost little either way. No fixed cap: one (8,192) flattened the orders at the fourth change file at 1M
 * (docs/decisions/026).
 */
export function maxPiecesFor (size: number): number {
  return Math.max(16, Math.floor(size / 16))
}

const STEP_MASK = 0x3fff
/** Pieces written (or edits made) between two yields of an edit: ~0.1 ms of work. */
const EDIT_STEP_MASK = 0xfff

/** The pieces of an order being written, a run that continues the last piece extending it. */
class PieceWriter {
  readonly pieces: Piece[] = []
  readonly ends: number[] = []
  size = 0
  /** Runs pushed, for the edit's yields. */
  pushed = 0

  /** `length` slots of `source` from `start`; `piece`, when given, is that same run's piece, shared. */
  push (source: Uint32Array | null, start: number, length: number, piece?: Piece): void {
    if (length <= 0) return
    this.pushed++
    const last = this.pieces.at(-1)
    if (last !== undefined && last.source === source && last.start + (this.size - (this.ends.at(-2) ?? 0)) === start) {
      this.size += length
      this.ends[this.ends.length - 1] = this.size
      return
    }
    // A piece is never changed once written (a run extends by its end alone): versions share them.
    this.pieces.push(piece ?? { source, start })
    this.size += length
    this.ends.push(this.size)
  }
}

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
   * ranks `addedAt` (ascending, as `added` is in served order): the old pieces cut around them, those it
   * leaves whole shared.
   */
  * edit (removed: readonly number[], added: Uint32Array, addedAt: readonly number[], maxPieces?: number): Generator<void, RankOrder> {
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
    const order = new RankOrder(out.pieces, out.ends)
    return out.pieces.length > (maxPieces ?? maxPiecesFor(out.size)) ? yield * order.flattened() : order
  }

  /** The ranks `from` to `to` written to `out` as (parts of) this order's pieces, a yield every few thousand. */
  private * copy (out: PieceWriter, from: number, to: number): Generator<void, void> {
    for (let rank = from, p = from < to ? this.pieceOf(from) : 0; rank < to; p++) {
      const piece = this.pieces[p] as Piece
      const first = p === 0 ? 0 : this.ends[p - 1] as number
      const end = Math.min(to, this.ends[p] as number)
      out.push(piece.source, piece.start + rank - first, end - rank, rank === first ? piece : undefined)
      rank = end
      if ((out.pushed & EDIT_STEP_MASK) === 0) yield
    }
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
