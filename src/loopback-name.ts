// Whether a host names this machine's loopback: the operator's pages (ADR 039) and REQUEST_JOURNAL=auto (ADR 041) ask.
import { isIP } from 'node:net'

/** localhost, *.localhost (RFC 6761: never resolved by DNS), 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function loopbackName (host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
  if (name === 'localhost' || name.endsWith('.localhost')) return true
  if (isIP(name) === 4) return name.startsWith('127.')
  if (isIP(name) !== 6) return false
  const canonical = new URL(`http://[${name}]`).hostname
  return canonical === '[::1]' || canonical.startsWith('[::ffff:7f')
}
