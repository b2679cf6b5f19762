// Items' served bytes, rendered once at load (ADR 019), back to back in buffers the model reads in place.
import fastJson from 'fast-json-stringify'
import { ContentItemSchema } from '../../schemas/content-item.js'
import { forSerializer } from '../../schemas/serializer-schema.js'
import type { SnapshotItem } from '../../schemas/snapshot.js'
import { memoryPolicy } from '../memory-policy.js'

/** What items are rendered by: an image's fingerprint covers it (images/image-fingerprint.ts). */
export const ITEM_SERIALIZER: { schema: object, options: fastJson.Options } = {
  schema: forSerializer(ContentItemSchema),
  options: {}
}

// fast-json-stringify emits exactly the schema's properties: `companies` and unknown extras never leave.
const serializeItem = fastJson(ITEM_SERIALIZER.schema, ITEM_SERIALIZER.options) as (item: SnapshotItem) => string

// DRF's JSONRenderer writes non-ASCII as is but escapes these two, which break JavaScript string literals.
const LINE_SEPARATORS = /[\u2028\u2029]/g
function escapeSeparator (c: string): string {
  return c === '\u2028' ? '\\u2028' : '\\u2029'
}

export function renderItem (item: SnapshotItem): string {
  const json = serializeItem(item)
  return LINE_SEPARATORS.test(json) ? json.replace(LINE_SEPARATORS, escapeSeparator) : json
}

/** The original's `-backdate, -pk`: one comparison for every caller (ADR 027). */
export function servedBefore (dateA: number, pkA: number, dateB: number, pkB: number): boolean {
  return dateA > dateB || (dateA === dateB && pkA > pkB)
}

/** `YYYY-MM-DD` → YYYYMMDD, which sorts like the date. */
export function dateKey (backdate: string): number {
  return Number(backdate.slice(0, 4)) * 10000 + Number(backdate.slice(5, 7)) * 100 + Number(backdate.slice(8, 10))
}

const EMPTY = Buffer.alloc(0)

/** Unused bytes in a chunk not worth a copy. */
const SLACK = 64 * 1024

/** Each item followed by its comma, so a page is views of this memory (ADR 004); never Node's pool (ADR 011). */
export class ItemBytes {
  private buffer: Buffer<ArrayBufferLike> = EMPTY
  private used = 0

  /** `full`: a model's chunks are handed to it; without, the buffer grows until taken (a parse thread's). */
  constructor (private readonly size: number, private readonly full?: (bytes: Buffer) => void) {}

  /** Returns where its JSON starts; its length is `lastLength`. */
  write (item: SnapshotItem): number {
    const json = renderItem(item)
    // A UTF-16 code unit is at most 3 UTF-8 bytes: the cheap bound first.
    if (this.used + json.length * 3 + 1 > this.buffer.length) this.room(Buffer.byteLength(json) + 1)
    const start = this.used
    const written = this.buffer.write(json, start)
    this.buffer[start + written] = 0x2c // ','
    this.used += written + 1
    this.lastLength = written
    return start
  }

  /** Without its comma. */
  lastLength = 0

  get length (): number {
    return this.used
  }

  take (): Buffer {
    const used = this.used
    this.used = 0
    if (used === 0) return itemMemory(0)
    // A model's full chunk is shared already.
    if (this.full !== undefined && this.buffer.length - used <= SLACK) {
      const taken = this.buffer.subarray(0, used)
      this.buffer = EMPTY
      return taken
    }
    // Copied so a parse thread reuses its buffer (ADR 010). Shared: counted by V8, a large reload's items set off
    // a major GC every 64 MB (ADR 011).
    const taken = itemMemory(used)
    this.buffer.copy(taken, 0, 0, used)
    return taken
  }

  private room (bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return
    if (this.full !== undefined) {
      if (this.used > 0) this.full(this.take())
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

/** Shared unless the memory policy says otherwise. */
function itemMemory (bytes: number): Buffer {
  return memoryPolicy().sharedItemMemory ? Buffer.from(new SharedArrayBuffer(bytes)) : Buffer.allocUnsafeSlow(bytes)
}
