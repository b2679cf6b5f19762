// GET /-/status: what an operator checks when an editor says "my file is not showing": which file,
// which version, loaded when, how many items, and how reloads have gone.
import type { FastifyInstance } from 'fastify'
import { StatusSchema, type Status } from '../schemas/operations.js'

export async function statusRoute (app: FastifyInstance): Promise<void> {
  app.get('/-/status', {
    schema: { summary: 'The served snapshot and the history of reloads', response: { 200: StatusSchema } }
  }, async (): Promise<Status> => {
    const store = app.snapshots
    const { info } = store.current()
    const reloads = store.status()
    return {
      snapshot: { path: store.file, version: info.version, generatedAt: info.generatedAt, loadedAt: info.loadedAt.toISOString(), items: store.current().itemCounts() },
      reloads: {
        ...reloads,
        lastFailure: reloads.lastFailure === null ? null : { at: reloads.lastFailure.at.toISOString(), problems: [...reloads.lastFailure.problems] }
      }
    }
  })
}
