// SNAPSHOT_URL → its source; the large S3 SDK is loaded only for an s3:// URL.
import { HttpSource } from './http-source.js'
import type { RemoteSource } from './remote-source.js'
import { SourceError } from '../errors.js'
import type { SecretUrl } from '../secret-url.js'

interface SourceOptions {
  forcePathStyle: boolean
  /** SNAPSHOT_HTTP_HEADERS. */
  headers?: Readonly<Record<string, string>> | null
}

export async function openSource (
  given: SecretUrl,
  { forcePathStyle, headers = null }: SourceOptions
): Promise<RemoteSource> {
  const url = given.reveal()
  let source: RemoteSource
  if (url.protocol === 's3:') {
    const { S3Source } = await import('./s3-source.js')
    source = new S3Source(url, { forcePathStyle })
  } else {
    source = new HttpSource(url, { headers })
  }
  if (source.extension === null) {
    throw new SourceError(`the ${url.protocol === 's3:' ? 'S3 key' : 'URL\'s path'} must end in .json, .jsonl or .ndjson (the format follows it)`)
  }
  return source
}
