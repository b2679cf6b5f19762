// Where a thread's log lines go: standard output, through a buffer of fixed size. A reader that stops reading (a
// stuck log shipper, a full pipe) costs lines, counted, never memory, answers or a clean exit (ADR 032).
import { createWriteStream, fstatSync, writeSync } from 'node:fs'
import { Socket } from 'node:net'
import type { Writable } from 'node:stream'

/** Lines waiting for the reader, per thread, at the most (counted in characters: JSON lines are mostly ASCII). */
export const LOG_BUFFER_BYTES = 1024 * 1024

const STDOUT = 1

export class LogDestination {
  /** Lines dropped since the start because the buffer was full. */
  dropped = 0
  /** Called once the reader takes lines again after some were dropped, with how many were. */
  onResumed: ((dropped: number) => void) | null = null
  readonly #sink: Writable
  readonly #limit: number
  /** Lines not yet handed to the sink, joined: the sink holds one write at a time, so the exit can flush the rest. */
  #pending = ''
  #scheduled = false
  #droppedUnsaid = 0
  #broken = false

  constructor (fd = STDOUT, limit = LOG_BUFFER_BYTES) {
    this.#limit = limit
    const stat = fstatSync(fd)
    // A pipe or a socket through libuv's stream, which makes the descriptor non-blocking: a full pipe waits in
    // the event loop, not in a thread-pool write that nothing can interrupt (that write kept a process from
    // exiting). libuv never closes descriptors 0 to 2, so a serving thread's end leaves stdout open.
    this.#sink = stat.isFIFO() || stat.isSocket()
      ? new Socket({ fd, readable: false, writable: true })
      : createWriteStream('', { fd, autoClose: false })
    // EPIPE (the reader is gone) and any other write error: logging stops, serving goes on.
    this.#sink.on('error', () => { this.#broken = true })
    process.on('exit', () => { this.#flushAtExit(fd) })
  }

  /** pino's call, one line at a time. */
  write (line: string): void {
    if (this.#broken) return
    if (this.#pending.length + this.#sink.writableLength + line.length > this.#limit) {
      this.dropped++
      this.#droppedUnsaid++
      return
    }
    this.#pending += line
    if (!this.#scheduled) {
      // Every line of one turn in one write.
      this.#scheduled = true
      setImmediate(() => {
        this.#scheduled = false
        this.#handOver()
      })
    }
  }

  /** Hands the pending lines to the sink once it has written the last ones; says what was dropped once it has. */
  #handOver (): void {
    if (this.#broken || this.#sink.writableLength > 0) return
    if (this.#pending !== '') {
      const lines = this.#pending
      this.#pending = ''
      this.#sink.write(lines, () => { this.#handOver() })
    }
    if (this.#droppedUnsaid > 0 && this.#sink.writableLength === 0) {
      const dropped = this.#droppedUnsaid
      this.#droppedUnsaid = 0
      this.onResumed?.(dropped)
    }
  }

  /** What the sink does not hold yet, written now as far as the reader takes it without waiting; the rest dropped. */
  #flushAtExit (fd: number): void {
    if (this.#pending === '' || this.#broken || this.#sink.writableLength > 0) return
    let rest = Buffer.from(this.#pending)
    try {
      while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest))
    } catch {
      // EAGAIN: the reader is behind; the rest is dropped rather than waited for.
    }
  }
}

/** Standard output's destination for this thread's logger, unless nothing is logged or pino-pretty writes. */
export function logDestination (level: string, pretty: boolean): LogDestination | null {
  return level === 'silent' || pretty ? null : new LogDestination()
}
