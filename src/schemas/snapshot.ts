// Snapshot format v1 (docs/reference/file-formats.md): what editors drop. schemas/'s JSON Schema is generated from it.
import { Type, type Static } from '@sinclair/typebox'
import { ContentItemSchema, SafeInteger } from './content-item.js'

export const LANGUAGE_PATTERN = '^[a-z]{2}(-[a-z]{2,4})?$'
/** LANGUAGE_PATTERN compiled, for the loader and the route alike. */
export const LANGUAGE = new RegExp(LANGUAGE_PATTERN)

// An item as stored: the served fields plus `companies`; extra fields allowed (forward compatibility), never served.
export const SnapshotItemSchema = Type.Composite([
  ContentItemSchema,
  Type.Object({
    companies: Type.Array(SafeInteger({ minimum: 0 }), {
      description: 'Companies the item is linked to (may be empty). Never served.'
    })
  })
], { title: 'SnapshotItem', additionalProperties: true })

const GeneratedAt = Type.Optional(Type.String({
  format: 'date-time',
  description: 'ISO-8601 timestamp; reported as the snapshot\'s version label.'
}))

export const SnapshotSchema = Type.Object({
  generated_at: GeneratedAt,
  languages: Type.Record(Type.String({ pattern: LANGUAGE_PATTERN }), Type.Array(SnapshotItemSchema), {
    minProperties: 1,
    // Without this a key that fails the pattern (`EN`, `__proto__`) would simply be ignored.
    additionalProperties: false,
    description: 'Path language segment → the items listed under /{segment}/api/internal/explore/, in any order.'
  })
}, {
  $id: 'https://explore-replica.dev/schemas/snapshot.schema.json',
  title: 'Explore snapshot v1',
  additionalProperties: true
})

export type SnapshotItem = Static<typeof SnapshotItemSchema>
export type Snapshot = Static<typeof SnapshotSchema>

// Snapshot format v1 as JSON Lines: an optional header line, then one item per line.

export const JsonLinesHeaderSchema = Type.Object({
  snapshot: Type.Literal('explore'),
  version: Type.Literal(1),
  generated_at: GeneratedAt,
  languages: Type.Optional(Type.Array(Type.String({ pattern: LANGUAGE_PATTERN }), {
    description: 'The languages served, those without items included; an item\'s `language` must be one of them.'
  }))
}, {
  $id: 'https://explore-replica.dev/schemas/snapshot-header.schema.json',
  title: 'Explore snapshot v1, JSON Lines header (the optional first line)',
  additionalProperties: true
})

export const JsonLinesItemSchema = Type.Composite([
  SnapshotItemSchema,
  Type.Object({
    language: Type.String({
      pattern: LANGUAGE_PATTERN,
      description: 'The path language segment the item is listed under.'
    })
  })
], {
  $id: 'https://explore-replica.dev/schemas/snapshot-line.schema.json',
  title: 'Explore snapshot v1, JSON Lines item (every other line)',
  additionalProperties: true
})
