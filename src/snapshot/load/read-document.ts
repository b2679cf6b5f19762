// A format v1 document read in chunks, its UTF-8 checked across them, and streamed (ADR 007).
import { isUtf8 } from 'node:buffer'
import { DocumentStreamer, type DocumentHandlers } from './stream-document.js'
import { positionAfter } from './text-position.js'
import { startsWithBom } from './json-text.js'
import { Pacer } from '../slices.js'
import { MAX_ITEM_BYTES, READ_CHUNK, chunksOf } from './read-chunks.js'
import { describePosition, NotText } from '../../errors.js'

/** `drain`: a writer's backpressure, asked after each chunk's items. */
export async function readDocument (
  file: string, handlers: DocumentHandlers & { drain?: () => Promise<void> | undefined }, chunkBytes = READ_CHUNK
): Promise<void> {
  const follower = new DocumentFollower(handlers)
  const pacer = new Pacer()
  // The first chunk tells whether there is a byte order mark.
  for await (const chunk of chunksOf(file, Math.max(chunkBytes, 4))) {
    follower.feed(chunk)
    const draining = handlers.drain?.()
    if (draining !== undefined) await draining
    if (pacer.due) await pacer.pause()
  }
  follower.end()
}

export class DocumentFollower {
  private readonly streamer: DocumentStreamer
  private readonly utf8 = new Utf8Check()
  private first = true
  private bytes = 0

  constructor (handlers: DocumentHandlers, maxItemBytes = MAX_ITEM_BYTES) {
    this.streamer = new DocumentStreamer(handlers, maxItemBytes)
  }

  feed (chunk: Buffer): void {
    let bytes = chunk
    if (this.first && bytes.length > 0) {
      this.first = false
      if (startsWithBom(bytes)) bytes = bytes.subarray(3)
    }
    this.bytes += chunk.length
    if (!this.utf8.check(bytes)) throw this.notUtf8(bytes)
    this.streamer.feed(bytes)
  }

  end (): void {
    if (this.bytes === 0) throw new NotText('the file is empty')
    if (!this.utf8.end()) throw this.notUtf8(Buffer.alloc(0))
    this.streamer.end()
  }

  /** `chunk`: not yet seen by the streamer. */
  private notUtf8 (chunk: Buffer): NotText {
    const at = this.utf8.problem
    const after = this.streamer.position
    // In the previous chunk: its last character.
    const position = at < 0
      ? { line: after.line, column: after.column - 1 }
      : positionAfter(after, chunk.subarray(0, at))
    return new NotText(`the file is not valid UTF-8 text at ${describePosition(position)}`)
  }
}

/** A character cut by a chunk boundary is checked once it is whole. */
export class Utf8Check {
  private carry: Buffer = Buffer.alloc(0)
  /** After a failure: in the last chunk, or below 0 in the one before (found only then: a valid file pays nothing). */
  problem = 0

  check (chunk: Buffer): boolean {
    let from = 0
    if (this.carry.length > 0) {
      while (from < 3 && from < chunk.length && ((chunk[from] as number) & 0xc0) === 0x80) from++
      const joined = Buffer.concat([this.carry, chunk.subarray(0, from)])
      // A chunk of one or two bytes.
      if (from === chunk.length && joined.length < sequenceLength(joined[0] as number)) {
        this.carry = joined
        return true
      }
      if (!isUtf8(joined)) {
        this.problem = -1
        return false
      }
    }
    const cut = cutAt(chunk, from)
    this.carry = Buffer.from(chunk.subarray(cut))
    if (isUtf8(chunk.subarray(from, cut))) return true
    this.problem = Math.max(firstInvalidUtf8(chunk, from, cut), from)
    return false
  }

  end (): boolean {
    if (this.carry.length === 0) return true
    this.problem = -1
    return false
  }
}

function firstInvalidUtf8 (bytes: Buffer, from: number, to: number): number {
  let i = from
  while (i < to) {
    const lead = bytes[i] as number
    if (lead < 0x80) {
      i++
      continue
    }
    // Narrowed for leads of an overlong form, a surrogate or a code point past U+10FFFF.
    let length = 0
    let low = 0x80
    let high = 0xbf
    if (lead >= 0xc2 && lead <= 0xdf) length = 2
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3
      if (lead === 0xe0) low = 0xa0
      else if (lead === 0xed) high = 0x9f
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4
      if (lead === 0xf0) low = 0x90
      else if (lead === 0xf4) high = 0x8f
    } else return i
    if (i + length > to) return i
    const second = bytes[i + 1] as number
    if (second < low || second > high) return i
    for (let k = 2; k < length; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return i
    i += length
  }
  return -1
}

function sequenceLength (lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
}

function cutAt (chunk: Buffer, from: number): number {
  for (let at = chunk.length - 1; at >= Math.max(from, chunk.length - 3); at--) {
    const byte = chunk[at] as number
    if ((byte & 0xc0) === 0x80) continue
    return byte >= 0xc0 && chunk.length - at < sequenceLength(byte) ? at : chunk.length
  }
  return chunk.length
}
