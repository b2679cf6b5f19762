// Streams a published object's body into a local file, capped and flushed before anyone loads it: the one way
// both followers (snapshot and manifest) download.
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { pipeline } from 'node:stream/promises'
import { Transform } from 'node:stream'
import { SourceError } from '../errors.js'
import { VERSION_DIGEST } from '../snapshot/load/read-chunks.js'

/**
 * Streams `body` into `file` and resolves with its bytes and, asked for, their digest as a snapshot's version is
 * one (read-chunks.ts): a manifest's snapshot is matched with its version image by it. Rejects with a SourceError
 * when the body passes `maxBytes`, fails midway or is shorter than `length` (when the source said it); a local
 * failure (the cache disk) is rethrown as it is, for the caller to put in words.
 */
export async function downloadObject (
  body: AsyncIterable<Uint8Array>,
  file: string,
  { maxBytes, length, signal, digest = false }:
  { maxBytes: number, length: number | null, signal: AbortSignal, digest?: boolean }
): Promise<{ bytes: number, digest: string | null }> {
  let bytes = 0
  const hash = digest ? createHash(VERSION_DIGEST) : null
  const counter = new Transform({
    transform (chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      hash?.update(chunk)
      if (bytes > maxBytes) {
        done(new SourceError(`the object is more than SNAPSHOT_MAX_MB allows (${maxBytes} bytes): download stopped`))
      } else {
        done(null, chunk)
      }
    }
  })
  const out = createWriteStream(file, { flush: true })
  try {
    await pipeline(body, counter, out, { signal })
  } catch (error) {
    if (error instanceof SourceError) throw error
    if (typeof (error as NodeJS.ErrnoException).code === 'string' &&
      (error as NodeJS.ErrnoException).syscall !== undefined) throw error
    throw new SourceError(`the download failed: ${(error as Error).message}`)
  }
  if (!out.closed) await once(out, 'close')
  if (length !== null && bytes !== length) {
    throw new SourceError(`the download was cut short: ${bytes} of ${length} bytes`)
  }
  return { bytes, digest: hash === null ? null : hash.digest('base64url') }
}

/** Ends a body that will not be read (a refused object): its connection goes back to the pool or closes. */
export async function closeBody (body: AsyncIterable<Uint8Array>): Promise<void> {
  const destroy = (body as { destroy?: () => void }).destroy
  if (typeof destroy === 'function') destroy.call(body)
}
