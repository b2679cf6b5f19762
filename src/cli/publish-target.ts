// Where `publish` writes: a fleet's folder, a directory or an S3 prefix, and how an object there is compared.
import { createHash } from 'node:crypto'

export interface ReadManifest {
  text: string
  /** What tells it from a later one: its ETag, or its text. */
  version: string | null
}

/** A fleet's folder: a directory (publish-to-directory.ts) or an S3 prefix (publish-to-s3.ts). */
export interface PublishTarget {
  readonly shown: string
  /** 'Copied' or 'Uploaded', as the report says. */
  readonly putVerb: string
  readManifest: () => Promise<ReadManifest | null>
  /** 'present': there already, with the same bytes. */
  putObject: (name: string, file: string) => Promise<'uploaded' | 'present'>
  /** Unless the manifest is no longer `expected` (null: there was none). */
  writeManifest: (text: string, expected: ReadManifest | null) => Promise<void>
  close?: () => void
}

/** The hex digest of a stream's bytes: an object already published is compared by it, never reuploaded. */
export async function digestOf (bytes: AsyncIterable<Uint8Array>, algorithm: 'md5' | 'sha256'): Promise<string> {
  const hash = createHash(algorithm)
  for await (const chunk of bytes) hash.update(chunk)
  return hash.digest('hex')
}
