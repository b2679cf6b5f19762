// A snapshot behind an HTTP(S) URL, asked for conditionally (an unchanged one costs a 304).
// Redirects followed here, not by undici: it passes headers other than Authorization to another origin.
import { Readable } from 'node:stream'
import { formatExtension, refuseEncoded, type Fetched, type RemoteSource, type Validators } from './remote-source.js'
import { SourceError } from '../errors.js'
import { shownUrl, shownUrlsIn } from '../secret-url.js'

/** As many as fetch's own `redirect: 'follow'` takes. */
const MAX_REDIRECTS = 20
const REDIRECTS = new Set([301, 302, 303, 307, 308])

interface HttpSourceOptions {
  /** Sent to the URL's origin and nowhere else. */
  headers?: Readonly<Record<string, string>> | null
}

export class HttpSource implements RemoteSource {
  readonly shown: string
  readonly extension: RemoteSource['extension']
  // #: never in what a logger or JSON.stringify prints.
  /** With its user:password: a manifest's objects are resolved against it. */
  readonly #given: URL
  /** Without credentials: fetch refuses them. */
  readonly #url: URL
  readonly #options: HttpSourceOptions
  /** For #url's origin only. */
  readonly #credentials: ReadonlyArray<[string, string]>

  constructor (url: URL, options: HttpSourceOptions = {}) {
    this.extension = formatExtension(url.pathname)
    this.#given = new URL(url)
    this.#url = new URL(url)
    this.#url.username = ''
    this.#url.password = ''
    this.shown = shownUrl(this.#url.href)
    this.#options = options
    const credentials = Object.entries(options.headers ?? {})
    if (url.username !== '' || url.password !== '') {
      credentials.push(['authorization', `Basic ${basicCredentials(url)}`])
    }
    this.#credentials = credentials
  }

  sibling (name: string): HttpSource {
    // A signed URL's query signs one object only: not carried over.
    return new HttpSource(new URL(name, this.#given), this.#options)
  }

  async fetch (known: Validators | null, signal: AbortSignal): Promise<Fetched> {
    const { response, at } = await this.request('GET', known, signal)
    if (response.status === 304) {
      await response.body?.cancel()
      return { changed: false }
    }
    if (response.status !== 200 || response.body === null) {
      await response.body?.cancel()
      const status = `${response.status} ${response.statusText}`.trim()
      throw new SourceError(response.status === 401 || response.status === 403
        ? this.refusal(status, at)
        : `${this.shown} answered ${status}`)
    }
    try {
      // Asked for `identity`: fetch would decode anything else, of a size nothing has judged.
      refuseEncoded(response.headers.get('content-encoding'), this.shown)
    } catch (error) {
      await response.body.cancel()
      throw error
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
    if (validators.etag === null && validators.lastModified === null) return true
    const { response } = await this.request('HEAD', validators, signal)
    await response.body?.cancel()
    if (response.status === 304) return true
    // A URL signed for GET alone (S3, GCS) refuses HEAD.
    if (response.status !== 200) return true
    const now = validatorsOf(response.headers)
    return now.etag === validators.etag && now.lastModified === validators.lastModified
  }

  /** Credentials refused, none given, or not sent (a redirect to another origin). */
  private refusal (status: string, at: URL): string {
    if (at.origin !== this.#url.origin) {
      const why = this.#credentials.length > 0 ? `: the credentials are sent to ${this.#url.origin} only` : ''
      return `${this.shown} was redirected to ${at.origin}, which answered ${status}${why}`
    }
    if (this.#credentials.length > 0) {
      return `${this.shown} refused the credentials (${status}): check the user and password in SNAPSHOT_URL or SNAPSHOT_HTTP_HEADERS`
    }
    return `${this.shown} refused the request, which had no credentials (${status}): give a user and password in SNAPSHOT_URL or a header in SNAPSHOT_HTTP_HEADERS`
  }

  private async request (
    method: 'GET' | 'HEAD',
    known: Validators | null,
    signal: AbortSignal
  ): Promise<{ response: Response, at: URL }> {
    let at = this.#url
    for (let redirects = 0; ; redirects++) {
      const headers = new Headers({ 'user-agent': 'explore-replica', 'accept-encoding': 'identity' })
      if (at.origin === this.#url.origin) for (const [name, value] of this.#credentials) headers.set(name, value)
      if (known?.etag != null) headers.set('if-none-match', known.etag)
      if (known?.lastModified != null) headers.set('if-modified-since', known.lastModified)
      let response: Response
      try {
        response = await fetch(at, { method, headers, signal, redirect: 'manual' })
      } catch (error) {
        throw new SourceError(`${this.shown} could not be reached: ${describeFetchError(error)}`)
      }
      const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null
      if (location === null) return { response, at }
      await response.body?.cancel()
      if (redirects === MAX_REDIRECTS) {
        throw new SourceError(`${this.shown} could not be reached: redirect count exceeded`)
      }
      at = redirectTarget(location, at, this.shown)
    }
  }
}

/** Without any user:password: fetch refuses them. */
function redirectTarget (location: string, from: URL, shown: string): URL {
  let target: URL
  try {
    target = new URL(location, from)
  } catch {
    throw new SourceError(`${shown} could not be reached: a redirect's Location is not a URL`)
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new SourceError(`${shown} could not be reached: redirected to a ${target.protocol} URL, not http(s)`)
  }
  target.username = ''
  target.password = ''
  return target
}

/** Percent-escapes decoded to bytes, as browsers do. */
function basicCredentials (url: URL): string {
  return Buffer.concat([percentDecoded(url.username), Buffer.from(':'), percentDecoded(url.password)])
    .toString('base64')
}

/** A `%` that starts no escape stays as it is (decodeURIComponent would throw). */
function percentDecoded (text: string): Buffer {
  return Buffer.concat(text.split(/(%[0-9a-fA-F]{2})/).map(part => /^%[0-9a-fA-F]{2}$/.test(part)
    ? Buffer.from([parseInt(part.slice(1), 16)])
    : Buffer.from(part, 'utf8')))
}

function validatorsOf (headers: Headers): Validators {
  return { etag: headers.get('etag'), lastModified: headers.get('last-modified') }
}

/** undici's "fetch failed" carries its reason in `cause`; a message may name a URL, shown without its secrets. */
export function describeFetchError (error: unknown): string {
  return shownUrlsIn(fetchErrorReason(error))
}

function fetchErrorReason (error: unknown): string {
  if ((error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError') return 'timed out'
  const own = (error as { code?: unknown }).code
  if (typeof own === 'string') return own
  const cause = (error as { cause?: { code?: string, message?: string } }).cause
  if (cause?.code !== undefined) return cause.code
  if (cause?.message !== undefined) return cause.message
  return (error as Error).message
}
