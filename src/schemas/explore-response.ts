// What the explore endpoint answers: DRF's page envelope, error bodies and OPTIONS metadata (schemas/, OpenAPI).
import { Type, type Static } from '@sinclair/typebox'
import { ContentItemSchema, Nullable } from './content-item.js'
import { LANGUAGE_PATTERN } from './snapshot.js'

export const ExplorePageSchema = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'Items matching the query across all pages.' }),
  next: Nullable(Type.String(), { description: 'Absolute URL of the next page, or null.' }),
  previous: Nullable(Type.String(), { description: 'Absolute URL of the previous page, or null.' }),
  results: Type.Array(ContentItemSchema)
}, {
  $id: 'https://explore-replica.dev/schemas/explore-page.schema.json',
  title: 'ExplorePage'
})

export const ErrorDetailSchema = Type.Object({
  detail: Type.String()
}, { title: 'ErrorDetail', description: 'DRF\'s error body: 404, 405, 406 and other refusals.' })

export const CompaniesErrorSchema = Type.Object({
  companies: Type.Array(Type.String())
}, { title: 'CompaniesError', description: 'A `companies` value that is not a whole number.' })

export const OptionsMetadataSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  renders: Type.Array(Type.String()),
  parses: Type.Array(Type.String())
}, { title: 'OptionsMetadata', description: 'DRF\'s SimpleMetadata for the view.' })

export const ExploreParamsSchema = Type.Object({
  // No `pattern`: a segment that is not a language is a 404 (an unknown path), not a validation error.
  lang: Type.String({ description: `Language segment (${LANGUAGE_PATTERN}): a key of the snapshot's \`languages\`.` })
})

// Documented, never refused here: explore-query.ts reads them by DRF's rules (a bad `limit` or `offset` falls back to
// the default, a bad `companies` gets DRF's own body).
export const ExploreQuerySchema = Type.Object({
  companies: Type.Optional(Type.Array(Type.String(), {
    description: 'Company id; repeat for the union of several. Blank values are ignored; anything but digits is a 400.'
  })),
  limit: Type.Optional(Type.Array(Type.String(), {
    description: 'Page size: digits > 0, else 10; at most the configured maximum. The last value wins.'
  })),
  offset: Type.Optional(Type.Array(Type.String(), {
    description: 'Items to skip: digits, else 0. The last value wins.'
  })),
  format: Type.Optional(Type.Array(Type.String(), {
    description: 'DRF\'s format override: `json` or blank; anything else is a 404.'
  }))
}, { additionalProperties: Type.Array(Type.String()) })

export type OptionsMetadata = Static<typeof OptionsMetadataSchema>
