// Where a thread's log lines go: standard output, through a buffer of fixed size. A reader that stops reading (a
// stuck log shipper, a full pipe) costs lines, counted, never memory, answers or a clean exit (ADR 032).
import { createWriteStream, fstatSync, writeSync } from 'node:fs'
import { Socket } from 'node:net'
import type { Writable } from 'node:stream'

/** Lines waiting for the reader, per thread, at the most (counted in characters: JSON lines are mostly ASCII). */
const LOG_BUFFER_BYTES = 1024 * 1024

/** What a pipe takes in one piece (PIPE_BUF on Linux): threads writing whole lines in such pieces never tear one. */
const PIECE = 4096
const STDOUT = 1

export class LogDestination {
  /** Lines dropped since the start because the buffer was full. */
  dropped = 0
  /** Called once the reader takes lines again after some were dropped, with how many were. */
  onResumed: ((dropped: number) => void) | null = null
  readonly #fd: number
  readonly #sink: Writable | null
  readonly #limit: number
  /**
   * Lines not yet handed to the sink, from `#head` on: it holds one piece at a time, so the exit can flush the rest.
   * A list, not one string: a piece taken off a long string flattens all of it, every piece (ADR 032).
   */
  #lines: string[] = []
  #head = 0
  #pendingChars = 0
  /** The piece the sink holds: a pipe takes a piece whole or not at all, so all of it is lost if it is let go. */
  #inFlight = ''
  #scheduled = false
  #droppedUnsaid = 0
  #broken = false
  readonly #atExit = (): void => { this.close() }

  constructor (fd = STDOUT, limit = LOG_BUFFER_BYTES) {
    this.#fd = fd
    this.#limit = limit
    this.#sink = openSink(fd)
    if (this.#sink === null) {
      // Nothing to write to (a closed descriptor): every line is dropped, the service goes on.
      this.#broken = true
      return
    }
    // EPIPE (the reader is gone) and any other write error: logging stops, serving goes on.
    this.#sink.on('error', () => { this.#broken = true })
    process.on('exit', this.#atExit)
  }

  /** pino's call, one line at a time. */
  write (line: string): void {
    if (this.#broken) return
    if (this.#pendingChars + (this.#sink as Writable).writableLength + line.length > this.#limit) {
      this.dropped++
      this.#droppedUnsaid++
      return
    }
    this.#lines.push(line)
    this.#pendingChars += line.length
    if (!this.#scheduled) {
      // The lines of one turn leave together.
      this.#scheduled = true
      setImmediate(() => {
        this.#scheduled = false
        this.#handOver()
      })
    }
  }

  /**
   * Writes what the sink does not hold yet as far as the reader takes it without waiting, whole lines only, then
   * lets the descriptor go: a write still waiting would keep a serving thread from ending (process exit, or a
   * thread's close). The rest is dropped, and counted.
   */
  close (): void {
    process.off('exit', this.#atExit)
    const sink = this.#sink
    if (sink === null || this.#broken) return
    this.#broken = true
    if (sink.writableLength === 0) {
      try {
        while (this.#head < this.#lines.length) {
          const piece = this.#nextPiece()
          // A socket may take part of a piece: what is left of it is not written after it.
          if (writeSync(this.#fd, piece) < Buffer.byteLength(piece)) break
        }
      } catch {
        // EAGAIN: the reader is behind.
      }
    }
    this.dropped += this.#lines.length - this.#head + (sink.writableLength > 0 ? countLines(this.#inFlight) : 0)
    this.#lines = []
    this.#head = 0
    sink.destroy()
  }

  /** Hands the sink the next piece once it has written the last; says what was dropped once it has written all. */
  #handOver (): void {
    const sink = this.#sink as Writable
    if (this.#broken || sink.writableLength > 0) return
    if (this.#head < this.#lines.length) {
      const piece = this.#nextPiece()
      this.#inFlight = piece
      sink.write(piece, () => { this.#handOver() })
    }
    if (this.#droppedUnsaid > 0 && this.#head === this.#lines.length && sink.writableLength === 0) {
      const dropped = this.#droppedUnsaid
      this.#droppedUnsaid = 0
      this.onResumed?.(dropped)
    }
  }

  /** The waiting lines that fit a piece, taken off the list; a longer first line alone. */
  #nextPiece (): string {
    const lines = this.#lines
    let end = this.#head + 1
    let chars = (lines[this.#head] as string).length
    for (let next = lines[end]; next !== undefined && chars + next.length <= PIECE; next = lines[++end]) {
      chars += next.length
    }
    const piece = end === this.#head + 1 ? lines[this.#head] as string : lines.slice(this.#head, end).join('')
    this.#head = end
    this.#pendingChars -= chars
    // The lines taken are let go: all at once when none wait, else once they are most of the list.
    if (end === lines.length) {
      this.#lines = []
      this.#head = 0
    } else if (end > 4096 && end * 2 > lines.length) {
      this.#lines = lines.slice(end)
      this.#head = 0
    }
    return piece
  }
}

/**
 * A pipe or a socket through libuv's stream, which makes the descriptor non-blocking: a full pipe waits in the event
 * loop, not in a thread-pool write that nothing interrupts (that write kept a process from exiting). libuv never
 * closes descriptors 0 to 2, so destroying it leaves stdout open. Anything else (a file, /dev/null, a terminal)
 * through a file stream. Null: no descriptor to write to.
 */
function openSink (fd: number): Writable | null {
  try {
    const stat = fstatSync(fd)
    return stat.isFIFO() || stat.isSocket()
      ? new Socket({ fd, readable: false, writable: true })
      : createWriteStream('', { fd, autoClose: false })
  } catch {
    return null
  }
}

function countLines (text: string): number {
  let lines = 0
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++
  return lines
}
