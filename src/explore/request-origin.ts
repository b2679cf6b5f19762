// Absolute links' scheme and host as Django's `build_absolute_uri` finds them, and Django's Host check.

/** Django's `validate_host`. */
export function hostAllowed (host: string, allowed: readonly string[] | null): boolean {
  if (allowed === null) return true
  const lower = host.toLowerCase()
  const domain = lower.endsWith(']') ? lower : lower.replace(/:[0-9]+$/, '').replace(/\.$/, '')
  return allowed.some(pattern => pattern === '*' || pattern === domain ||
    (pattern.startsWith('.') && (domain.endsWith(pattern) || domain === pattern.slice(1))))
}

export interface OriginOptions {
  /** No trailing slash; null: the request's. */
  publicBaseUrl: string | null
  /** Believe `X-Forwarded-Proto` and `X-Forwarded-Host`. */
  trustProxy: boolean
  /** Django's ALLOWED_HOSTS; null: any valid host. */
  allowedHosts: readonly string[] | null
}

interface RequestLike {
  headers: Record<string, string | string[] | undefined>
  /** A request may carry Host twice. */
  rawHeaders?: string[]
  socket: { localAddress?: string | undefined, localPort?: number | undefined, encrypted?: boolean }
}

/** Node keeps the first Host in `headers`; `headersDistinct` would build an object of every header. */
function repeatedHost (rawHeaders: string[] | undefined): boolean {
  if (rawHeaders === undefined) return false
  let seen = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return true
  }
  return false
}

// django.http.request.host_validation_re: a DNS name or a bracketed IPv6 address, then an optional port.
const HOST_SYNTAX = /^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(:[0-9]+)?$/

/** Django (≥ 4.1) reads SECURE_PROXY_SSL_HEADER's first value. */
function firstValue (header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  const comma = value.indexOf(',')
  return (comma < 0 ? value : value.slice(0, comma)).trim()
}

/** Django reads X-Forwarded-Host whole (`_get_raw_host`): `evil.example, news.example.com` is no host, so a 400. */
function wholeValue (header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header.join(', ') : header
}

/** The host as named (Django keeps its case), or null if Django would refuse it. */
export function requestHost (
  request: RequestLike, { trustProxy, allowedHosts }: Pick<OriginOptions, 'trustProxy' | 'allowedHosts'>
): string | null {
  let host = trustProxy ? wholeValue(request.headers['x-forwarded-host']) : undefined
  if (host === undefined) {
    // Django sees two joined by a comma, which no host matches.
    if (repeatedHost(request.rawHeaders)) return null
    host = request.headers.host as string | undefined
  }
  if (host === undefined) {
    // HTTP/1.0 may omit Host; Django then uses the server's own.
    const address = request.socket.localAddress ?? '127.0.0.1'
    const port = request.socket.localPort ?? 80
    host = `${address.includes(':') ? `[${address}]` : address}:${port}`
  }
  const lower = host.toLowerCase()
  if (!HOST_SYNTAX.test(lower)) return null
  // A domain of only dots, or none before the port, too.
  const domain = lower.endsWith(']') ? lower : lower.replace(/:[0-9]+$/, '').replace(/\.$/, '')
  if (domain === '' || !hostAllowed(host, allowedHosts)) return null
  return host
}

/** `linkHost`: the host `requestHost` accepted. */
export function linkOrigin (
  request: { linkHost: string, headers: RequestLike['headers'], socket: RequestLike['socket'] },
  options: Pick<OriginOptions, 'publicBaseUrl' | 'trustProxy'>
): string {
  if (options.publicBaseUrl !== null) return options.publicBaseUrl
  const proto = options.trustProxy ? firstValue(request.headers['x-forwarded-proto']) : undefined
  const scheme = proto !== undefined
    ? (proto === 'https' ? 'https' : 'http')
    : (request.socket.encrypted === true ? 'https' : 'http')
  return `${scheme}://${request.linkHost}`
}
