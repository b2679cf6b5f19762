// What the operator's version endpoints take and answer: GET /-/versions, POST /-/rollback, /-/pin, /-/unpin.
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './content-item.js'

const Items = Type.Record(Type.String(), Type.Integer(), { description: 'Items per language.' })

export const PinSchema = Type.Object({
  version: Type.String({ description: 'The version pinned: served whatever the source publishes, until unpinned.' }),
  pinnedAt: Type.String({ description: 'When it was pinned (ISO-8601).' }),
  from: Nullable(Type.String(), { description: 'The version served before the pin.' })
}, { title: 'Pin' })

export const NewestSchema = Type.Object({
  noticedAt: Type.String({ description: 'When a newer file or published object was last noticed (ISO-8601).' }),
  source: Type.String({ description: 'The snapshot file, or the published object\'s URL.' }),
  etag: Nullable(Type.String(), { description: 'The published object\'s ETag; null for a file.' })
}, { title: 'Newest', description: 'Noticed while pinned, not loaded: unpin loads it.' })

// A kept version as recorded in STATE_DIR/versions/<version>/version.json and as GET /-/versions lists it.
const keptFields = {
  version: Type.String(),
  generatedAt: Nullable(Type.String()),
  items: Items,
  servedAt: Type.String({ description: 'When this replica first served it (ISO-8601).' }),
  source: Type.String({ description: 'The snapshot file or published object it came from.' }),
  chain: Type.Object({
    snapshot: Type.String({ description: 'The kept snapshot file, in the version\'s directory.' }),
    changes: Type.Array(Type.String(), { description: 'Change files applied after it, in order.' })
  })
}

/**
 * Checked at every start: a state directory outlives its build and may be copied, edited or cut short.
 * `changeDigests` (of `chain.changes`, in order) is absent in older builds' records.
 */
export const KeptRecordSchema = Type.Object({
  ...keptFields,
  changeDigests: Type.Optional(Type.Array(Type.String()))
})

export type KeptRecord = Static<typeof KeptRecordSchema>

const KeptVersionSchema = Type.Object({
  ...keptFields,
  served: Type.Boolean({ description: 'Whether it is the version served now.' })
})

export const VersionsSchema = Type.Object({
  served: Nullable(Type.Object({
    version: Type.String(),
    generatedAt: Nullable(Type.String()),
    items: Items
  }), { description: 'The version served; null while the first one loads.' }),
  pin: Nullable(PinSchema),
  newest: Nullable(NewestSchema),
  kept: Type.Array(KeptVersionSchema, {
    description: 'The kept versions, newest first (KEEP_VERSIONS of them, and the served one).'
  })
}, { title: 'Versions' })

export type Versions = Static<typeof VersionsSchema>
export type Newest = Static<typeof NewestSchema>

export const PinRequestSchema = Type.Object({
  version: Type.String({ minLength: 1, description: 'A kept version (GET /-/versions lists them).' })
}, { title: 'PinRequest', additionalProperties: false })

export type PinRequest = Static<typeof PinRequestSchema>
