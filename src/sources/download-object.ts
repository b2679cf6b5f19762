// How both followers download: capped, and flushed before anyone loads it.
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { pipeline } from 'node:stream/promises'
import { Transform } from 'node:stream'
import { SourceError } from '../errors.js'
import { VERSION_DIGEST } from '../snapshot/load/read-chunks.js'
import { OWNER_FILE } from '../owner-only.js'
import { DIGEST_BEHIND_FROM_BYTES, DigestBehind } from './digest-behind.js'

/** The most an object may be, and the rule that says so: `more than ${rule} allows (${detail})`. */
export interface DownloadLimit {
  maxBytes: number
  rule: string
  detail: string
}

/** Each object up to SNAPSHOT_MAX_MB; what one manifest's update downloads, together, up to twice that (ADR 040). */
export class DownloadBudget {
  private spent = 0

  constructor (private readonly maxObject: number, private readonly maxTotal = 2 * maxObject) {}

  next (): DownloadLimit {
    const left = this.maxTotal - this.spent
    return left < this.maxObject
      ? {
          maxBytes: left,
          rule: 'the manifest\'s download budget',
          detail: `${left} of ${this.maxTotal} bytes left: its new objects together, twice SNAPSHOT_MAX_MB at most`
        }
      : { maxBytes: this.maxObject, rule: 'SNAPSHOT_MAX_MB', detail: `${this.maxObject} bytes` }
  }

  spend (bytes: number): void {
    this.spent += bytes
  }
}

export function objectLimit (maxBytes: number): DownloadLimit {
  return new DownloadBudget(maxBytes).next()
}

/** `version`: a snapshot's (base64url, as a load takes it); `sha256`: an image's, as a manifest names it (hex). */
export type DigestKind = 'version' | 'sha256'

/** How far ahead of its digest thread the file may be written before it is told. */
const TELL_EVERY_BYTES = 8 * 1024 * 1024

export interface DownloadOptions {
  limit: DownloadLimit
  length: number | null
  signal: AbortSignal
  digest?: DigestKind | null
  /** A download in the background: its digest thread runs below the threads that answer requests. */
  lowPriority?: boolean
  /** Tests: the size from which the digest is taken behind. */
  digestBehindFrom?: number
  /** Given each piece as it comes; a promise it returns is waited for before the next. */
  onPiece?: ((piece: Uint8Array) => Promise<void> | undefined) | null
}

/** The digest as it streams, when asked for (ADR 033, 042); a local failure is rethrown as is. */
export async function downloadObject (
  body: AsyncIterable<Uint8Array>,
  file: string,
  options: DownloadOptions
): Promise<{ bytes: number, digest: string | null }> {
  const { limit, length, signal, digest = null, lowPriority = false, onPiece = null } = options
  const { digestBehindFrom = DIGEST_BEHIND_FROM_BYTES } = options
  const { maxBytes } = limit
  let bytes = 0
  const algorithm = digest === 'version' ? VERSION_DIGEST : 'sha256'
  const encoding = digest === 'version' ? 'base64url' : 'hex'
  const behind = digest !== null && length !== null && length >= digestBehindFrom
    ? new DigestBehind({ file, algorithm, encoding, lowPriority })
    : null
  const hash = digest !== null && behind === null ? createHash(algorithm) : null
  const out = createWriteStream(file, { flush: true, mode: OWNER_FILE })
  let told = 0
  const counter = new Transform({
    transform (chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      hash?.update(chunk)
      if (behind !== null && out.bytesWritten - told >= TELL_EVERY_BYTES) {
        told = out.bytesWritten
        behind.written(told)
      }
      if (bytes > maxBytes) {
        done(new SourceError(`the object is more than ${limit.rule} allows (${limit.detail}): download stopped`))
        return
      }
      let taken
      try {
        taken = onPiece?.(chunk)
      } catch (error) {
        done(error as Error)
        return
      }
      if (taken === undefined) {
        done(null, chunk)
        return
      }
      taken.then(() => { done(null, chunk) }, (error: unknown) => { done(error as Error) })
    }
  })
  try {
    await pipeline(body, counter, out, { signal })
  } catch (error) {
    await behind?.stop()
    if (error instanceof SourceError) throw error
    if (typeof (error as NodeJS.ErrnoException).code === 'string' &&
      (error as NodeJS.ErrnoException).syscall !== undefined) throw error
    throw new SourceError(`the download failed: ${(error as Error).message}`)
  }
  if (!out.closed) await once(out, 'close')
  if (length !== null && bytes !== length) {
    await behind?.stop()
    throw new SourceError(`the download was cut short: ${bytes} of ${length} bytes`)
  }
  const taken = behind !== null ? await behind.end(bytes) : hash?.digest(encoding) ?? null
  return { bytes, digest: taken }
}

/** Its connection goes back to the pool or closes. */
export async function closeBody (body: AsyncIterable<Uint8Array>): Promise<void> {
  const destroy = (body as { destroy?: () => void }).destroy
  if (typeof destroy === 'function') destroy.call(body)
}
