// What the operational endpoints answer: /-/status, /-/healthz and /-/readyz.
import { Type, type Static } from '@sinclair/typebox'

export const StatusSchema = Type.Object({
  path: Type.String({ description: 'The snapshot file the service watches.' }),
  snapshot: Type.Union([Type.Object({
    version: Type.String({ description: 'A digest of the served file\'s bytes; ETags start with it.' }),
    generatedAt: Type.Union([Type.String(), Type.Null()], { description: 'The served snapshot\'s `generated_at`.' }),
    loadedAt: Type.String({ description: 'When the served snapshot was loaded (ISO-8601).' }),
    items: Type.Record(Type.String(), Type.Integer(), { description: 'Items per language.' })
  }), Type.Null()], { description: 'The snapshot served; null while the first one is loading.' }),
  reloads: Type.Object({
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    failedInARow: Type.Integer({ description: 'Failures since the last successful reload.' }),
    lastFailure: Type.Union([Type.Object({
      at: Type.String(),
      problems: Type.Array(Type.String(), { description: 'The validation report, one line per problem.' })
    }), Type.Null()]),
    staleSince: Type.Union([Type.String(), Type.Null()], {
      description: 'When the first of the failures in a row happened: since then the file is not the one served (null: it is).'
    })
  })
}, { title: 'Status' })

export type Status = Static<typeof StatusSchema>

export const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { title: 'Health' })

export const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unready')]),
  reason: Type.Optional(Type.String({ description: 'Why not ready; or, when ready, that the served snapshot is stale.' }))
}, { title: 'Readiness' })
