// A fleet's manifest: the published object naming a snapshot and its change files, in order; read by the follower
// (sources/follow-manifest.ts) and the publisher (cli/publish-command.ts).
import { Type, type Static } from '@sinclair/typebox'

/** A SNAPSHOT_URL whose name ends so is a manifest, not a snapshot. */
export const MANIFEST_SUFFIX = 'manifest.json'

/** A file name in the manifest's own folder: no `/`, so a manifest can never send a replica outside its prefix. */
const OBJECT_NAME_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9._-]*$'

/** Room under the 255-byte file name limit for the download's temporary name, `.<name>.download-<pid>`. */
const OBJECT_NAME_MAX_LENGTH = 200

const ObjectName = (description: string, extension: string) => Type.String({
  pattern: OBJECT_NAME_PATTERN.replace('*$', `*\\.(${extension})$`),
  maxLength: OBJECT_NAME_MAX_LENGTH,
  description
})

/**
 * An image described otherwise (an older publisher's) is left out by the reader, never a refusal (ADR 033). What a
 * replica needs to trust one it has not parsed is here, not in a name (ADR 042).
 */
export const ManifestImageSchema = Type.Object({
  name: ObjectName('The snapshot\'s version image, by its name beside the manifest.', 'image'),
  format: Type.Integer({ minimum: 1, description: 'The image format: a replica reads only its own.' }),
  by: Type.String({ maxLength: 100, description: 'The explore-replica release that made it, for people: replicas go by `fingerprint`.' }),
  fingerprint: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,64}$',
    description: 'What rendered its items and laid out its arrays: a replica reads only an image of its own fingerprint.'
  }),
  snapshot: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,64}$',
    description: 'The snapshot\'s digest (its version, as `/-/status` shows it): the image\'s header names it, and the snapshot downloaded later must have it.'
  }),
  digest: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the image\'s bytes, hex.' }),
  bytes: Type.Integer({ minimum: 0, description: 'The image\'s size in bytes.' })
}, {
  additionalProperties: true,
  description: 'The snapshot as a version image, made by `publish`: a replica of the same fingerprint joins by ' +
    'downloading it first and serving from it; the snapshot follows. Older replicas do not read it.'
})

export type ManifestImage = Static<typeof ManifestImageSchema>

export const ManifestSchema = Type.Object({
  manifest: Type.Literal('explore'),
  version: Type.Literal(1),
  snapshot: ObjectName(
    'The snapshot, by its name beside the manifest (.json, .jsonl or .ndjson).',
    'json|jsonl|ndjson'
  ),
  changes: Type.Array(ObjectName('A change file, by its name beside the manifest (.jsonl).', 'jsonl'), {
    uniqueItems: true,
    description: 'The change files applied to the snapshot, in this order; empty for the snapshot alone.'
  }),
  image: Type.Optional(ManifestImageSchema),
  items: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description: 'Items per language in the snapshot, as `publish` counted them: the next snapshot published is ' +
      'compared with them (--max-change). Replicas do not read it.'
  }))
}, {
  $id: 'https://explore-replica.dev/schemas/manifest.schema.json',
  title: 'Explore fleet manifest',
  additionalProperties: true
})

export type Manifest = Static<typeof ManifestSchema>

export function isManifestName (path: string): boolean {
  return path.endsWith(MANIFEST_SUFFIX)
}
