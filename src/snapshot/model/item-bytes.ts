// An item's served bytes: rendered once, when a snapshot loads, through the compiled ContentItem schema,
// and written back to back with the other items' into buffers that the served model reads in place. Both
// the parse threads (batches of both formats, parse-batch.ts) and the builder (a document parsed whole) write
// with it.
import fastJson from 'fast-json-stringify'
import { ContentItemSchema } from '../../schemas/content-item.js'
import { forSerializer } from '../../schemas/serializer-schema.js'
import type { SnapshotItem } from '../../schemas/snapshot.js'
import { memoryPolicy } from '../memory-policy.js'

// fast-json-stringify emits exactly the schema's properties: `companies` and unknown extras never leave.
const serializeItem = fastJson(forSerializer(ContentItemSchema)) as (item: SnapshotItem) => string

// DRF's JSONRenderer writes non-ASCII as is but escapes these two, which break JavaScript string literals.
const LINE_SEPARATORS = /[\u2028\u2029]/g
function escapeSeparator (c: string): string {
  return c === '\u2028' ? '\\u2028' : '\\u2029'
}

/** What DRF's JSONRenderer would write for one item. */
export function renderItem (item: SnapshotItem): string {
  const json = serializeItem(item)
  return LINE_SEPARATORS.test(json) ? json.replace(LINE_SEPARATORS, escapeSeparator) : json
}

/**
 * The served order (the original's: `-backdate`, then `-pk`): whether the item of (dateA, pkA) comes before that of
 * (dateB, pkB), dates as dateKey gives them. pks are unique, so the order is total.
 */
export function servedBefore (dateA: number, pkA: number, dateB: number, pkB: number): boolean {
  return dateA > dateB || (dateA === dateB && pkA > pkB)
}

/** `YYYY-MM-DD` → YYYYMMDD, which sorts like the date. The item was validated as a calendar date. */
export function dateKey (backdate: string): number {
  return Number(backdate.slice(0, 4)) * 10000 + Number(backdate.slice(5, 7)) * 100 + Number(backdate.slice(8, 10))
}

const EMPTY = Buffer.alloc(0)

/** Below this many unused bytes a model's chunk is kept as it is: the rest is not worth a copy. */
const SLACK = 64 * 1024

/**
 * Rendered items written back to back, each followed by the comma that separates it from the next one in a
 * page, so a page's items go out as views of this memory, a comma included with every item but the last
 * (snapshot-model.ts, PageItems). Items land in large buffers rather than one small Buffer or string each
 * (less memory, less GC). Every buffer handed over is shared memory of its own (a SharedArrayBuffer, never
 * a slice of Node's pool), which V8 does not count against the thread that holds it (item-memory.ts).
 */
export class ItemBytes {
  private buffer: Buffer<ArrayBufferLike> = EMPTY
  private used = 0

  /**
   * @param size bytes of a buffer
   * @param full given, a full buffer is handed to it and a new one started (a model's chunks);
   *   not given, the buffer grows until taken (a parse thread's batch)
   */
  constructor (private readonly size: number, private readonly full?: (bytes: Buffer) => void) {}

  /** Writes the item; returns where its JSON starts (its length is `lastLength`). */
  write (item: SnapshotItem): number {
    const json = renderItem(item)
    // A UTF-16 code unit is at most 3 UTF-8 bytes: check the cheap bound before measuring exactly.
    if (this.used + json.length * 3 + 1 > this.buffer.length) this.room(Buffer.byteLength(json) + 1)
    const start = this.used
    const written = this.buffer.write(json, start)
    this.buffer[start + written] = 0x2c // ','
    this.used += written + 1
    this.lastLength = written
    return start
  }

  /** The length of the JSON last written, without its comma. */
  lastLength = 0

  /** Bytes written to the current buffer. */
  get length (): number {
    return this.used
  }

  /** The bytes written so far, in a buffer of their own; the next item starts a new buffer. */
  take (): Buffer {
    const used = this.used
    this.used = 0
    if (used === 0) return itemMemory(0)
    // A model's full chunk (shared memory already) is kept as it is; the next is made by the next item, none
    // for nothing after the last.
    if (this.full !== undefined && this.buffer.length - used <= SLACK) {
      const taken = this.buffer.subarray(0, used)
      this.buffer = EMPTY
      return taken
    }
    // Copied, and the buffer written again: a parse thread's batches reuse one (a buffer made and freed per
    // batch costs resident memory for good: parse-worker.ts). A model's chunk with room to spare is copied
    // too, into one of its size. Into shared memory, which V8 does not count as the loading thread's own:
    // a batch's bytes become one of the model's chunks there, and counted, the gigabyte of a large reload
    // set off a major collection every 64 MB (item-memory.ts).
    const taken = itemMemory(used)
    this.buffer.copy(taken, 0, 0, used)
    return taken
  }

  private room (bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return
    if (this.full !== undefined) {
      if (this.used > 0) this.full(this.take())
      // A model's chunk, written in place: shared memory from the start.
      this.buffer = itemMemory(Math.max(this.size, bytes))
      return
    }
    if (this.used === 0) {
      this.buffer = Buffer.allocUnsafeSlow(Math.max(this.size, bytes))
      return
    }
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.buffer.length, this.used + bytes))
    this.buffer.copy(grown, 0, 0, this.used)
    this.buffer = grown
  }
}

/** Memory of its own for a model's items: shared, unless the memory policy says otherwise (memory-policy.ts). */
function itemMemory (bytes: number): Buffer {
  return memoryPolicy().sharedItemMemory ? Buffer.from(new SharedArrayBuffer(bytes)) : Buffer.allocUnsafeSlow(bytes)
}
