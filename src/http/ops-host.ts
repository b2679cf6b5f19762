// The Host names the operator's pages answer (ADR 039): a loopback name, an IP address, or one OPS_ALLOWED_HOSTS
// names. DNS rebinding hands a page the operator visits this origin under the attacker's name, never an address.
import { isIP } from 'node:net'
import { hostAllowed } from '../explore/request-origin.js'
import { loopbackName } from '../loopback-name.js'

/** `host`: a Host header request-checks.ts accepted (Django's syntax), or none (HTTP/1.0: the server's own address). */
export function opsHostAllowed (host: string | undefined, allowed: readonly string[] | null): boolean {
  if (host === undefined) return true
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:[0-9]*$/, '')
  if (isIP(name.replace(/^\[(.*)\]$/, '$1')) !== 0 || loopbackName(name)) return true
  return allowed !== null && hostAllowed(host, allowed)
}
