// SNAPSHOT_URL → the source that reads it. The S3 SDK is loaded only for an s3:// URL: it is large, and a
// replica that reads files or HTTP never needs it.
import { ConfigError } from '../errors.js'
import { HttpSource } from './http-source.js'
import type { RemoteSource } from './remote-source.js'

export interface SourceOptions {
  forcePathStyle: boolean
  /** SNAPSHOT_HTTP_HEADERS (null: none). */
  headers?: Readonly<Record<string, string>> | null
}

/**
 * Throws a ConfigError when SNAPSHOT_URL and SNAPSHOT_HTTP_HEADERS cannot go together: credentials that would
 * be dropped without a word, or two of them for one Authorization header. Never repeats a secret.
 */
export function checkSourceOptions (text: string, { headers = null }: Pick<SourceOptions, 'headers'>): void {
  const url = new URL(text)
  const names = Object.keys(headers ?? {}).map(name => name.toLowerCase())
  if (url.protocol === 's3:') {
    if (names.length > 0) throw new ConfigError('SNAPSHOT_HTTP_HEADERS is for an http(s):// SNAPSHOT_URL: an s3:// one is signed with the AWS settings (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE); unset SNAPSHOT_HTTP_HEADERS')
    if (url.username !== '' || url.password !== '') throw new ConfigError('SNAPSHOT_URL: an s3:// URL takes no user or password: it is signed with the AWS settings (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)')
    return
  }
  if ((url.username !== '' || url.password !== '') && names.includes('authorization')) {
    throw new ConfigError('SNAPSHOT_URL has a user and password (sent as Basic authentication) and SNAPSHOT_HTTP_HEADERS an Authorization header: give the credentials in one of them')
  }
}

export async function openSource (text: string, { forcePathStyle, headers = null }: SourceOptions): Promise<RemoteSource> {
  checkSourceOptions(text, { headers })
  const url = new URL(text)
  if (url.protocol === 's3:') {
    const { S3Source } = await import('./s3-source.js')
    return new S3Source(url, { forcePathStyle })
  }
  return new HttpSource(url, { headers })
}
