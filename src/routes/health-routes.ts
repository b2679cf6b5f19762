// Probes for load balancers and Kubernetes: /-/healthz says the process answers; /-/readyz says it
// serves the snapshot it should (the last reload did not fail), 503 with the reason otherwise.
import type { FastifyInstance } from 'fastify'
import { HealthSchema, ReadinessSchema } from '../schemas/operations.js'

export async function healthRoutes (app: FastifyInstance): Promise<void> {
  app.get('/-/healthz', {
    schema: { summary: 'Liveness: the process answers', response: { 200: HealthSchema } }
  }, async () => ({ status: 'ok' as const }))

  app.get('/-/readyz', {
    schema: { summary: 'Readiness: a snapshot is served and the last reload did not fail', response: { 200: ReadinessSchema, 503: ReadinessSchema } }
  }, async (_request, reply) => {
    // A snapshot is always loaded: the service does not start without one. What can go wrong later is
    // a file on disk the service refused, so that it serves an older one than the editors expect.
    const { failedInARow, lastFailure } = app.snapshots.status()
    if (failedInARow === 0) return { status: 'ready' as const }
    reply.code(503)
    return {
      status: 'unready' as const,
      reason: `the last ${failedInARow === 1 ? 'reload' : `${failedInARow} reloads`} of the snapshot failed: ${lastFailure?.problems[0] ?? 'unknown problem'}`
    }
  })
}
