// OPS_PORT: the /-/ pages on a listener of their own, the public port 404s them (the original has none). One Fastify
// routes both; the operator's port answers the API too, for the console's preview from its own origin.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import { drainOnClose } from '../http/drain-on-close.js'
import { ignoreExpectations } from '../http/expectations.js'
import { httpServerFactory, type ConnectionLimits } from '../http/http-server.js'
import { refuseOnSocket } from '../http/server-options.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The operator's listener when OPS_PORT is set; null when the /-/ pages share the main port. */
    ops: OpsListener | null
  }
}

interface OpsListenerOptions {
  port: number
  host: string
  requestTimeoutMs: number
  limits: ConnectionLimits
}

class OpsListener {
  readonly server: Server
  private readonly requests = new WeakSet<IncomingMessage>()

  constructor (
    private readonly options: OpsListenerOptions,
    route: (request: IncomingMessage, response: ServerResponse) => void
  ) {
    // The main server's limits and refusals (server-options.ts), so a bad or slow client meets the same ones.
    this.server = httpServerFactory(null, options.limits)((request, response) => {
      this.requests.add(request)
      route(request, response)
    }, {
      http: { maxHeaderSize: 16 * 1024, requireHostHeader: false },
      requestTimeout: options.requestTimeoutMs,
      connectionTimeout: options.requestTimeoutMs * 6
    })
    this.server.on('clientError', refuseOnSocket)
    ignoreExpectations(this.server)
    drainOnClose(this.server)
  }

  carried (request: IncomingMessage): boolean {
    return this.requests.has(request)
  }

  async listen (): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen({ port: this.options.port, host: this.options.host }, () => {
        this.server.off('error', reject)
        resolve()
      })
    })
    return this.server.address() as AddressInfo
  }

  async close (): Promise<void> {
    if (!this.server.listening) return
    await new Promise<void>(resolve => {
      this.server.close(() => resolve())
      this.server.closeIdleConnections()
    })
  }
}

export default fp<OpsListenerOptions>(async function opsListenerPlugin (app, options) {
  // app.routing exists once the instance is ready; requests only arrive after listen(), later still.
  const ops = new OpsListener(options, (request, response) => app.routing(request, response))
  app.decorate('ops', ops)
  // Which pages each port serves: ops-pages-access.ts.
  app.carriedByOps = request => ops.carried(request)
  app.addHook('onClose', async () => { await ops.close() })
}, { name: 'ops-listener' })
