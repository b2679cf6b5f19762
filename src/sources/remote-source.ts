// A snapshot published off this machine (HTTP(S) or S3): "has it changed since these validators, and its bytes?"
import { SourceError } from '../errors.js'

export interface Validators {
  etag: string | null
  lastModified: string | null
}

export type Fetched =
  | { changed: false }
  | {
    changed: true
    validators: Validators
    /** Null when the source does not say. */
    length: number | null
    body: AsyncIterable<Uint8Array>
  }

export interface RemoteSource {
  /** Never with credentials. */
  readonly shown: string
  /** Null for a manifest's image. */
  readonly extension: '.json' | '.jsonl' | '.ndjson' | null
  fetch: (known: Validators | null, signal: AbortSignal) => Promise<Fetched>
  /** Did it change during a download? */
  unchangedSince: (validators: Validators, signal: AbortSignal) => Promise<boolean>
  /** A manifest's snapshot and changes, through the same settings. */
  sibling: (name: string) => RemoteSource
}

/**
 * An object is downloaded as it is stored: its size is then what Content-Length, SNAPSHOT_MAX_MB and the update's
 * budget judge, and a digest is of its bytes (ADR 040). `aws-chunked` is how an upload was sent, not the object.
 */
export function refuseEncoded (encoding: string | null | undefined, shown: string): void {
  const codings = (encoding ?? '').split(',').map(coding => coding.trim().toLowerCase())
    .filter(coding => coding !== '' && coding !== 'identity' && coding !== 'aws-chunked')
  if (codings.length === 0) return
  throw new SourceError(
    `${shown} answered with Content-Encoding: ${codings.join(', ')}: snapshots, change files, manifests and images are downloaded unencoded, as stored (serve or upload them without a Content-Encoding)`
  )
}

export function formatExtension (path: string): RemoteSource['extension'] {
  const match = /\.(json|jsonl|ndjson)$/i.exec(path)
  return match === null ? null : `.${(match[1] as string).toLowerCase()}` as RemoteSource['extension']
}
