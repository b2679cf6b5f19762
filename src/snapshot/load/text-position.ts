// Line and column of a byte in UTF-8 text read in chunks, as an editor shows them: 1-based, columns in characters.
import { isAscii } from 'node:buffer'

export const NEWLINE = 0x0a
const EMPTY = Buffer.alloc(0)

export interface TextPosition {
  readonly line: number
  readonly column: number
}

export function countCharacters (bytes: Buffer, from: number, to: number): number {
  if (to - from >= 64 && isAscii(bytes.subarray(from, to))) return to - from
  return to - from - continuationBytes(bytes, from, to)
}

/** Four words at a time: 4× a byte loop (24 ms for 110 MB), what a file on one long line costs. */
function continuationBytes (bytes: Buffer, from: number, to: number): number {
  let count = 0
  let i = from
  while (i < to && ((bytes.byteOffset + i) & 3) !== 0) {
    if (((bytes[i] as number) & 0xc0) === 0x80) count++
    i++
  }
  const words = (to - i) >> 2
  if (words >= 16) {
    const view = new Int32Array(bytes.buffer, bytes.byteOffset + i, words)
    const blocks = words & ~3
    let k = 0
    while (k < blocks) {
      // A byte lane gains at most 4 a round: 63 rounds fit.
      const stop = Math.min(blocks, k + 252)
      let lanes = 0
      for (; k < stop; k += 4) {
        const a = view[k] as number
        const b = view[k + 1] as number
        const c = view[k + 2] as number
        const d = view[k + 3] as number
        lanes += (((a & ~(a << 1)) >>> 7) & 0x01010101) + (((b & ~(b << 1)) >>> 7) & 0x01010101) +
          (((c & ~(c << 1)) >>> 7) & 0x01010101) + (((d & ~(d << 1)) >>> 7) & 0x01010101)
      }
      count += (lanes & 0xff) + ((lanes >>> 8) & 0xff) + ((lanes >>> 16) & 0xff) + (lanes >>> 24)
    }
    i += blocks << 2
  }
  for (; i < to; i++) if (((bytes[i] as number) & 0xc0) === 0x80) count++
  return count
}

/** For a failure path, not a hot one. */
export function positionAfter (start: TextPosition, bytes: Buffer): TextPosition {
  let line = start.line
  let lineStart = -1
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) {
    line++
    lineStart = at
  }
  const column = lineStart === -1 ? start.column : 1
  return { line, column: column + countCharacters(bytes, lineStart + 1, bytes.length) }
}

/** `at(index)` for increasing indexes: no byte is looked at twice. */
export class PositionCounter {
  private line = 1
  private column = 1
  private chunk: Buffer = EMPTY
  private cursor = 0
  /** At or after `cursor`; -1: none. */
  private newline = -1

  begin (chunk: Buffer): void {
    this.chunk = chunk
    this.cursor = 0
    this.newline = chunk.indexOf(NEWLINE)
  }

  at (index: number): TextPosition {
    this.advance(index)
    return { line: this.line, column: this.column }
  }

  get current (): TextPosition {
    return { line: this.line, column: this.column }
  }

  end (): void {
    this.advance(this.chunk.length)
    this.chunk = EMPTY
    this.cursor = 0
  }

  private advance (index: number): void {
    let from = this.cursor
    if (this.newline !== -1 && this.newline < index) {
      const { chunk } = this
      let newline = this.newline
      do {
        this.line++
        from = newline + 1
        newline = chunk.indexOf(NEWLINE, from)
      } while (newline !== -1 && newline < index)
      this.newline = newline
      this.column = 1
    }
    this.column += countCharacters(this.chunk, from, index)
    this.cursor = index
  }
}
