// A file's lines, read in chunks and handed over one at a time: never the whole file in memory, a line cut
// by a chunk's end joined with its rest, and a turn of the event loop every few milliseconds of work, so
// a service reading a large file keeps answering. The JSON Lines loader and the converter read with it.
import { createReadStream } from 'node:fs'
import { SLICE_MS } from './load-options.js'

/** Bytes read at a time: a few thousand items, so lines straddle chunks all the time and cost one copy. */
export const READ_CHUNK = 1024 * 1024
const NEWLINE = 0x0a

export interface LineHandlers {
  /** Every chunk as read, before its lines (a digest of the file). */
  chunk?: (bytes: Buffer) => void
  /**
   * One line without its `\n`, numbered from 1; false stops the reading, a promise holds it until it
   * settles (a writer's backpressure). The bytes are valid only until then.
   */
  line: (bytes: Buffer, number: number) => boolean | Promise<boolean>
}

/** Reads `file` line by line; rejects with the file system's error when it cannot be read. */
export async function readLines (file: string, handlers: LineHandlers, chunkBytes = READ_CHUNK): Promise<void> {
  let number = 0
  let deadline = performance.now() + SLICE_MS
  let carry: Buffer | null = null
  for await (const chunk of createReadStream(file, { highWaterMark: chunkBytes }) as AsyncIterable<Buffer>) {
    handlers.chunk?.(chunk)
    const data: Buffer = carry === null ? chunk : Buffer.concat([carry, chunk])
    let start = 0
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      let go = handlers.line(data.subarray(start, end), ++number)
      if (typeof go !== 'boolean') go = await go
      if (!go) return
      start = end + 1
      // The clock costs more than a line: it is read every 64 lines.
      if ((number & 63) === 0 && performance.now() > deadline) {
        await new Promise(resolve => setImmediate(resolve))
        deadline = performance.now() + SLICE_MS
      }
    }
    // A line cut by the chunk's end: kept (copied, so the chunk is not) until the next chunk completes it.
    carry = start < data.length ? Buffer.from(data.subarray(start)) : null
  }
  if (carry !== null) await handlers.line(carry, ++number)
}
