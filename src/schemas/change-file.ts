// Change files: JSON Lines moving a snapshot to its next version: a header, then `upsert` lines (a snapshot's item
// line plus `op`) and `delete` lines, applied in file order.
import { Type } from '@sinclair/typebox'
import { SafeInteger } from './content-item.js'
import { LANGUAGE_PATTERN } from './snapshot.js'

/** A change's name: it ends the served version's name (`<snapshot>+<id>`), so nothing that reads as a path. */
export const CHANGE_ID_PATTERN = '^[A-Za-z0-9._-]+$'
/** The version's name is also a directory's (255 bytes at most) and shown in status and logs: a name, no message. */
export const CHANGE_ID_MAX_LENGTH = 100

export const ChangesHeaderSchema = Type.Object({
  changes: Type.Literal('explore'),
  version: Type.Literal(1),
  id: Type.String({
    pattern: CHANGE_ID_PATTERN,
    maxLength: CHANGE_ID_MAX_LENGTH,
    description: `The change's name: letters, digits, \`.\`, \`_\`, \`-\`; ${CHANGE_ID_MAX_LENGTH} characters at most.`
  }),
  generated_at: Type.Optional(Type.String({
    format: 'date-time',
    description: 'ISO-8601 timestamp of the change.'
  }))
}, {
  $id: 'https://explore-replica.dev/schemas/changes-header.schema.json',
  title: 'Explore change file, header (the required first line)',
  additionalProperties: true
})

export const ChangeDeleteSchema = Type.Object({
  op: Type.Literal('delete'),
  language: Type.String({ pattern: LANGUAGE_PATTERN }),
  pk: SafeInteger()
}, {
  $id: 'https://explore-replica.dev/schemas/changes-delete.schema.json',
  title: 'Explore change file, delete line',
  additionalProperties: true
})
