// The JSON Schema files in schemas/, written by `npm run schemas`; a test fails when the committed ones differ.
import { ExplorePageSchema } from './explore-response.js'
import { ManifestSchema } from './manifest.js'
import { JsonLinesHeaderSchema, JsonLinesItemSchema, SnapshotSchema } from './snapshot.js'

const DIALECT = 'https://json-schema.org/draft/2020-12/schema'

/** File name in schemas/ → its exact contents. */
export function jsonSchemaFiles (): Record<string, string> {
  const render = (schema: object) => `${JSON.stringify({ $schema: DIALECT, ...schema }, null, 2)}\n`
  return {
    'snapshot.schema.json': render(SnapshotSchema),
    'snapshot-header.schema.json': render(JsonLinesHeaderSchema),
    'snapshot-line.schema.json': render(JsonLinesItemSchema),
    'explore-page.schema.json': render(ExplorePageSchema),
    'manifest.schema.json': render(ManifestSchema)
  }
}
