// Probes: /-/healthz says the process answers; /-/readyz that it serves a snapshot (503 until the first is loaded
// and, with WORKERS > 1, every serving thread serves it; while closing, Fastify's own 503).
import type { FastifyInstance } from 'fastify'
import { HealthSchema, ReadinessSchema } from '../schemas/operations.js'

export async function healthRoutes (app: FastifyInstance): Promise<void> {
  app.get('/-/healthz', {
    schema: { summary: 'Liveness: the process answers', response: { 200: HealthSchema } }
  }, async () => ({ status: 'ok' as const }))

  app.get('/-/readyz', {
    schema: { summary: 'Readiness: a snapshot is served', response: { 200: ReadinessSchema, 503: ReadinessSchema } }
  }, async (request, reply) => {
    if (app.snapshots.current() === null) {
      reply.code(503)
      return { status: 'unready' as const, reason: 'the first snapshot is still loading' }
    }
    if (app.servingPool?.ready() === false) {
      reply.code(503)
      return { status: 'unready' as const, reason: 'the serving threads are taking the first snapshot' }
    }
    // Stays ready while newer files fail: a bad file published to every replica must not empty the load balancer.
    const { failedInARow, lastFailure } = app.snapshots.status()
    if (failedInARow === 0) return { status: 'ready' as const }
    const failed = `serving the last good snapshot: the last ${failedInARow === 1 ? 'reload' : `${failedInARow} reloads`} failed`
    // A problem names the file and quotes it: not for a public address (ops-pages-access.ts).
    if (app.opsPagesHidden(request.raw)) return { status: 'ready' as const, reason: failed }
    return { status: 'ready' as const, reason: `${failed}: ${lastFailure?.problems[0] ?? 'unknown problem'}` }
  })
}
