// GET /-/status: what an operator checks when an editor says "my file is not showing": which file,
// which version, loaded when, how many items, and how reloads have gone.
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'

export const StatusSchema = Type.Object({
  snapshot: Type.Object({
    path: Type.String({ description: 'The snapshot file the service watches.' }),
    version: Type.String({ description: 'A digest of the served file\'s bytes; ETags start with it.' }),
    generatedAt: Type.Union([Type.String(), Type.Null()], { description: 'The served snapshot\'s `generated_at`.' }),
    loadedAt: Type.String({ description: 'When the served snapshot was loaded (ISO-8601).' }),
    items: Type.Record(Type.String(), Type.Integer(), { description: 'Items per language.' })
  }),
  reloads: Type.Object({
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    failedInARow: Type.Integer({ description: 'Failures since the last successful reload.' }),
    lastFailure: Type.Union([Type.Object({
      at: Type.String(),
      problems: Type.Array(Type.String(), { description: 'The validation report, one line per problem.' })
    }), Type.Null()])
  })
}, { title: 'Status' })

export type Status = Static<typeof StatusSchema>

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
