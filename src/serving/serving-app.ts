// A serving thread's Fastify instance (ADR 029): the public app, its counts, and operator pages forwarded.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import { Gauge, Registry } from 'prom-client'
import type { Config } from '../config.js'
import { controlUnavailable } from '../errors.js'
import { OPS_PREFIX, publicApp, type ThreadShare } from '../http/public-app.js'
import { countRequests } from '../plugins/request-metrics.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { ForwardedAnswer, ForwardedRequest } from './messages.js'

/** Not counted here, but where it is answered. */
const FORWARDED = `${OPS_PREFIX}*`
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding'])

export async function servingApp (
  config: Config,
  snapshot: () => SnapshotModel | null,
  forward: ((request: ForwardedRequest) => Promise<ForwardedAnswer>) | null,
  share: ThreadShare | null = null
): Promise<{ app: FastifyInstance, registry: Registry }> {
  const registry = new Registry()
  const app = await publicApp(config, snapshot, async app => {
    if (config.metrics) {
      countRequests(app, registry, FORWARDED)
      loopLag(registry)
    }
    if (forward === null) return
    app.all(FORWARDED, { logLevel: 'silent', schema: { hide: true } }, async (request, reply) => {
      let answer: ForwardedAnswer
      try {
        answer = await forward({
          method: request.method,
          url: request.raw.url ?? request.url,
          headers: request.headers,
          remoteAddress: request.socket.remoteAddress ?? ''
        })
      } catch {
        throw controlUnavailable()
      }
      const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name)))
      reply.hijack()
      reply.raw.writeHead(answer.statusCode, headers)
      reply.raw.end(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength))
    })
  }, share)
  return { app, registry }
}

/** What a reload costs the answers: `explore_nodejs_eventloop_lag_*` are the control's, which loads. */
function loopLag (registry: Registry): void {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_serving_eventloop_lag_max_seconds',
    help: 'The longest event-loop delay of any serving thread since the last scrape (WORKERS > 1).',
    registers: [registry],
    aggregator: 'max',
    collect () { this.set(delay.max / 1e9) }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'explore_serving_eventloop_lag_p99_seconds',
    help: 'The 99th percentile of a serving thread\'s event-loop delay since the last scrape, the highest of them (WORKERS > 1).',
    registers: [registry],
    aggregator: 'max',
    // After the max (registered first): resets the histogram.
    collect () {
      this.set(delay.percentile(99) / 1e9)
      delay.reset()
    }
  })
}
