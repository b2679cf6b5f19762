// Django's checks before any view, for both paths: the Host, then the target's length (the original's proxy's limit).
import type { IncomingMessage } from 'node:http'
import { invalidHost, uriTooLong } from '../errors.js'
import { requestHost, type OriginOptions } from '../explore/request-origin.js'

export interface RequestCheckSettings extends Pick<OriginOptions, 'trustProxy' | 'allowedHosts'> {
  maxUrlLength: number
}

/** The host links are built with; throws Django's 400 or 414. */
export function checkRequest (raw: IncomingMessage, settings: RequestCheckSettings): string {
  const host = requestHost(raw, settings)
  if (host === null) throw invalidHost()
  if ((raw.url as string).length > settings.maxUrlLength) throw uriTooLong()
  return host
}
