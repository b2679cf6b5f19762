// A file's lines one at a time, for the converter (the loader batches them: frame-lines.ts).
import { Pacer } from '../slices.js'
import { MAX_ITEM_BYTES, READ_CHUNK, chunksOf } from './read-chunks.js'
import { LineTooLong } from '../../errors.js'
import { NEWLINE } from './text-position.js'

/** `line`'s bytes are valid until it returns; false stops. */
export async function readLines (
  file: string, handlers: { line: (bytes: Buffer, number: number) => boolean | Promise<boolean> },
  chunkBytes = READ_CHUNK, maxLineBytes = MAX_ITEM_BYTES
): Promise<void> {
  let number = 0
  const pacer = new Pacer()
  // Joined once whole: joining at every chunk would copy a long line again and again.
  let pieces: Buffer[] = []
  let pending = 0
  for await (const chunk of chunksOf(file, chunkBytes)) {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const line = pieces.length === 0
        ? chunk.subarray(start, end)
        : Buffer.concat([...pieces, chunk.subarray(start, end)])
      pieces = []
      pending = 0
      let go = handlers.line(line, ++number)
      if (typeof go !== 'boolean') go = await go
      if (!go) return
      start = end + 1
      // The clock costs more than a line.
      if ((number & 63) === 0 && pacer.due) await pacer.pause()
    }
    if (start < chunk.length) {
      // Copied: chunksOf reuses its buffer.
      pieces.push(Buffer.from(chunk.subarray(start)))
      pending += chunk.length - start
      if (pending > maxLineBytes) throw new LineTooLong(number + 1, maxLineBytes)
    }
  }
  if (pieces.length > 0) await handlers.line(Buffer.concat(pieces), ++number)
}
