// Who reaches the operator's pages (ADR 039). By port: with OPS_PORT, that port alone; without it, PORT, where a
// HOST that is not loopback gets the probes alone unless EXPOSE_OPS_PAGES. By Host: wherever they answer, a
// request naming a host nobody reaches them by on purpose is refused (ops-host.ts), every request on OPS_PORT too.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { opsHostRefused } from '../errors.js'
import { opsHostAllowed } from '../http/ops-host.js'
import { loopbackName } from '../loopback-name.js'
import { OPS_PREFIX } from '../http/public-app.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether a request reached the operator's pages on the public port with only the probes there. */
    opsPagesHidden: (request: import('node:http').IncomingMessage) => boolean
  }
}

/** What kubelets, load balancers and container engines ask: public wherever the API is. */
export const PROBES: ReadonlySet<string> = new Set(['/-/healthz', '/-/readyz'])

/** Which of the operator's pages PORT serves. */
export function publicOpsPages (config: Pick<Config, 'opsPort' | 'host' | 'exposeOpsPages'>): 'none' | 'probes' | 'all' {
  if (config.opsPort !== null) return 'none'
  return loopbackName(config.host) || config.exposeOpsPages ? 'all' : 'probes'
}

export default fp<Pick<Config, 'opsPort' | 'host' | 'exposeOpsPages' | 'opsAllowedHosts'>>(
  async function opsPagesAccess (app: FastifyInstance, config) {
    const onPublic = publicOpsPages(config)
    app.decorate('opsPagesHidden', request => onPublic === 'probes' && !app.carriedByOps(request))
    // Not async: after a promise's turn, a body that cannot be framed is refused (400) before its route answers.
    app.addHook('onRequest', (request, reply, done) => {
      const ops = app.carriedByOps(request.raw)
      // The route matched, not the raw target: the router also takes /%2D/status and GET http://host/-/status there.
      const route = request.routeOptions.url
      const page = route?.startsWith(OPS_PREFIX) === true
      if (!ops && page && (onPublic === 'none' || (onPublic === 'probes' && !PROBES.has(route)))) {
        reply.callNotFound() // as any unknown path, APPEND_SLASH included
        return
      }
      if ((ops || (page && !PROBES.has(route))) && !opsHostAllowed(request.headers.host, config.opsAllowedHosts)) {
        done(opsHostRefused())
        return
      }
      done()
    })
  },
  { name: 'ops-pages-access' }
)
