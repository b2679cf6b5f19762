// In a worker of the cluster (WORKERS > 1, cluster/primary.ts): `app.cluster`, the link to the primary.
// Elsewhere it is null, and the service runs as the single process it is.
import cluster from 'node:cluster'
import fp from 'fastify-plugin'
import { WorkerLink } from '../cluster/worker-link.js'

declare module 'fastify' {
  interface FastifyInstance {
    cluster: WorkerLink | null
  }
}

export default fp(async function clusterPlugin (app) {
  app.decorate('cluster', cluster.isWorker && cluster.worker !== undefined ? new WorkerLink(cluster.worker.id, app.snapshots) : null)
}, { name: 'cluster', dependencies: ['snapshot'] })
