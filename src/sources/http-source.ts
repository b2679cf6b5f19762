// A snapshot behind an HTTP(S) URL, asked for with If-None-Match and If-Modified-Since, so that an unchanged
// snapshot costs a 304 and no bytes. Node's own fetch (undici): redirects followed (at most 20), TLS checked.
import { Readable } from 'node:stream'
import { formatExtension, SourceError, type Fetched, type RemoteSource, type Validators } from './remote-source.js'

export class HttpSource implements RemoteSource {
  readonly shown: string
  readonly extension: RemoteSource['extension']

  constructor (private readonly url: URL) {
    const extension = formatExtension(url.pathname)
    if (extension === null) throw new SourceError('the URL\'s path must end in .json, .jsonl or .ndjson (the format follows it)')
    this.extension = extension
    const shown = new URL(url)
    shown.username = ''
    shown.password = ''
    this.shown = shown.href
  }

  sibling (name: string): HttpSource {
    // Resolved as a link on the manifest's page would be: same origin and folder. A query (a signed URL's)
    // signs one object only, so it is not carried over.
    return new HttpSource(new URL(name, this.url))
  }

  async fetch (known: Validators | null, signal: AbortSignal): Promise<Fetched> {
    const response = await this.request('GET', known, signal)
    if (response.status === 304) {
      await response.body?.cancel()
      return { changed: false }
    }
    if (response.status !== 200 || response.body === null) {
      await response.body?.cancel()
      throw new SourceError(`${this.shown} answered ${response.status} ${response.statusText}`.trim())
    }
    const length = response.headers.get('content-length')
    return {
      changed: true,
      validators: validatorsOf(response.headers),
      length: length === null ? null : Number(length),
      body: Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>)
    }
  }

  async unchangedSince (validators: Validators, signal: AbortSignal): Promise<boolean> {
    // Without validators nothing can tell: the download is taken as it is.
    if (validators.etag === null && validators.lastModified === null) return true
    const response = await this.request('HEAD', validators, signal)
    await response.body?.cancel()
    if (response.status === 304) return true
    // A URL signed for GET alone (S3, GCS) refuses HEAD: nothing to tell, so the download stands.
    if (response.status !== 200) return true
    const now = validatorsOf(response.headers)
    return now.etag === validators.etag && now.lastModified === validators.lastModified
  }

  private async request (method: 'GET' | 'HEAD', known: Validators | null, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'user-agent': 'explore-replica', 'accept-encoding': 'identity' }
    if (known?.etag != null) headers['if-none-match'] = known.etag
    if (known?.lastModified != null) headers['if-modified-since'] = known.lastModified
    try {
      return await fetch(this.url, { method, headers, signal, redirect: 'follow' })
    } catch (error) {
      throw new SourceError(`${this.shown} could not be reached: ${describeFetchError(error)}`)
    }
  }
}

function validatorsOf (headers: Headers): Validators {
  return { etag: headers.get('etag'), lastModified: headers.get('last-modified') }
}

/** undici's "fetch failed" carries its reason in `cause`: a refused connection, a redirect loop, a timeout. */
export function describeFetchError (error: unknown): string {
  if ((error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError') return 'timed out'
  const own = (error as { code?: unknown }).code
  if (typeof own === 'string') return own
  const cause = (error as { cause?: { code?: string, message?: string } }).cause
  if (cause?.code !== undefined) return cause.code
  if (cause?.message !== undefined) return cause.message
  return (error as Error).message
}
