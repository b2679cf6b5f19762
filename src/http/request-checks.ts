// What Django checks of every request before any view: the Host (a bad one would poison absolute links), then the
// target's length, which the original's proxy limited. Run by Fastify's first hook and by the fast path.
import type { IncomingMessage } from 'node:http'
import { invalidHost, uriTooLong } from '../errors.js'
import { requestHost, type OriginOptions } from '../explore/request-origin.js'

export interface RequestCheckSettings extends Pick<OriginOptions, 'trustProxy' | 'allowedHosts'> {
  maxUrlLength: number
}

/** The host links are built with; throws the 400 or the 414 Django would answer. */
export function checkRequest (raw: IncomingMessage, settings: RequestCheckSettings): string {
  const host = requestHost(raw, settings)
  if (host === null) throw invalidHost()
  if ((raw.url as string).length > settings.maxUrlLength) throw uriTooLong()
  return host
}
