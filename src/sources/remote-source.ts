// A snapshot published off this machine (an HTTP(S) URL, an S3 object): each source answers "has it changed since
// these validators, and if so, its bytes?"; following it is follow-source.ts's.

/** What tells one version of a remote object from another (HTTP's validators; S3's ETag). */
export interface Validators {
  etag: string | null
  lastModified: string | null
}

export type Fetched =
  | { changed: false }
  | {
    changed: true
    validators: Validators
    /** Bytes the source says the object has; null when it does not say. */
    length: number | null
    body: AsyncIterable<Uint8Array>
  }

export interface RemoteSource {
  /** The source as shown in logs and status: never with credentials. */
  readonly shown: string
  /** The object's format, by its name's extension; null for a name of none (a manifest's image). */
  readonly extension: '.json' | '.jsonl' | '.ndjson' | null
  /** The object if it changed since `known` (all of it when `known` is null). */
  fetch: (known: Validators | null, signal: AbortSignal) => Promise<Fetched>
  /** Whether the object is still the version `validators` names (after a download: did it change during it?). */
  unchangedSince: (validators: Validators, signal: AbortSignal) => Promise<boolean>
  /** The object `name` beside this one, through the same store and settings (a manifest's snapshot and changes). */
  sibling: (name: string) => RemoteSource
}

/** The extension that selects the format, from the last segment of a URL's path or an S3 key. */
export function formatExtension (path: string): RemoteSource['extension'] {
  const match = /\.(json|jsonl|ndjson)$/i.exec(path)
  return match === null ? null : `.${(match[1] as string).toLowerCase()}` as RemoteSource['extension']
}
