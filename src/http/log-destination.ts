// A thread's log lines to stdout through a fixed buffer: a stalled reader costs counted lines, never memory (ADR 032).
import { createWriteStream, fstatSync, open, write, writeSync, writev } from 'node:fs'
import { Socket } from 'node:net'
import type { Writable } from 'node:stream'
import { isatty } from 'node:tty'

/** Per thread, in characters (JSON lines are mostly ASCII). */
const LOG_BUFFER_BYTES = 1024 * 1024

/** PIPE_BUF on Linux: a write to a pipe this size is atomic, so threads never tear a line. */
const PIPE_PIECE = 4096
/** A file (or /dev/null) takes a write whole whatever its size; each is a thread-pool round trip (ADR 032). */
const FILE_PIECE = 64 * 1024
const STDOUT = 1

export class LogDestination {
  dropped = 0
  /** Called when the reader catches up after drops, with how many. */
  onResumed: ((dropped: number) => void) | null = null
  readonly #fd: number
  readonly #sink: Writable | null
  readonly #limit: number
  readonly #piece: number
  /** From `#head` on; a list, as slicing one long string flattens it on every piece (ADR 032). */
  #lines: string[] = []
  #head = 0
  #pendingChars = 0
  /** A piece whose write fails is counted as lost whole (a pipe takes it whole or not at all). */
  #inFlight = ''
  #scheduled = false
  #droppedUnsaid = 0
  #broken = false
  #closed = false
  readonly #atExit = (): void => { this.close() }

  constructor (fd = STDOUT, limit = LOG_BUFFER_BYTES) {
    this.#fd = fd
    this.#limit = limit
    const { sink, piece } = openSink(fd)
    this.#sink = sink
    this.#piece = piece
    if (this.#sink === null) {
      // A closed descriptor: every line is dropped.
      this.#broken = true
      return
    }
    // EPIPE or any write error: logging stops, serving goes on; the piece that failed and every later line are dropped.
    this.#sink.on('error', () => {
      this.#broken = true
      this.dropped += countLines(this.#inFlight)
      this.#inFlight = ''
    })
    process.on('exit', this.#atExit)
  }

  write (line: string): void {
    if (this.#closed) return
    if (this.#broken) {
      this.dropped++
      return
    }
    if (this.#pendingChars + (this.#sink as Writable).writableLength + line.length > this.#limit) {
      this.dropped++
      this.#droppedUnsaid++
      return
    }
    this.#lines.push(line)
    this.#pendingChars += line.length
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(() => {
        this.#scheduled = false
        this.#handOver()
      })
    }
  }

  /** Flushes what the reader takes without waiting, drops the rest: a pending write would keep a thread alive. */
  close (): void {
    process.off('exit', this.#atExit)
    const sink = this.#sink
    if (sink === null || this.#closed) return
    this.#closed = true
    // After a write error too: what it still held is counted.
    const writable = !this.#broken
    this.#broken = true
    if (writable && sink.writableLength === 0) {
      while (this.#head < this.#lines.length) {
        const piece = Buffer.from(this.#nextPiece())
        let written = 0
        try {
          written = writeSync(this.#fd, piece)
        } catch {
          // EAGAIN: the reader is behind.
        }
        // A piece's lines left the list when taken: those not written are dropped, and nothing may follow a torn one.
        if (written < piece.length) {
          this.dropped += countLines(piece.subarray(written).toString())
          break
        }
      }
    }
    this.dropped += this.#lines.length - this.#head + (sink.writableLength > 0 ? countLines(this.#inFlight) : 0)
    this.#lines = []
    this.#head = 0
    sink.destroy()
  }

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

  #nextPiece (): string {
    const lines = this.#lines
    let end = this.#head + 1
    let chars = (lines[this.#head] as string).length
    for (let next = lines[end]; next !== undefined && chars + next.length <= this.#piece; next = lines[++end]) {
      chars += next.length
    }
    const piece = end === this.#head + 1 ? lines[this.#head] as string : lines.slice(this.#head, end).join('')
    this.#head = end
    this.#pendingChars -= chars
    // Compact the list once the taken lines are most of it.
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
 * Pipes and sockets through libuv's non-blocking stream: a thread-pool write to a full pipe kept the process from
 * exiting. libuv never closes fds 0-2, so destroying it leaves stdout open. A file's stream would close it for every
 * thread (a destroy closes its fd whatever `autoClose` says): a serving thread's close lost the process's last lines.
 */
function openSink (fd: number): { sink: Writable | null, piece: number } {
  try {
    const stat = fstatSync(fd)
    if (stat.isFIFO() || stat.isSocket()) {
      return { sink: new Socket({ fd, readable: false, writable: true }), piece: PIPE_PIECE }
    }
    const sink = createWriteStream('', { fd, autoClose: false, fs: { open, write, writev, close: keepOpen } })
    // A terminal made non-blocking may take part of a write, and another thread's could follow it.
    return { sink, piece: isatty(fd) ? PIPE_PIECE : FILE_PIECE }
  } catch {
    return { sink: null, piece: PIPE_PIECE }
  }
}

function keepOpen (_fd: number, done: (error: NodeJS.ErrnoException | null) => void): void {
  done(null)
}

function countLines (text: string): number {
  let lines = 0
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++
  return lines
}
