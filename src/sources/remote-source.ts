// A snapshot published off this machine (HTTP(S) or S3): "has it changed since these validators, and its bytes?"

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

export function formatExtension (path: string): RemoteSource['extension'] {
  const match = /\.(json|jsonl|ndjson)$/i.exec(path)
  return match === null ? null : `.${(match[1] as string).toLowerCase()}` as RemoteSource['extension']
}
