// The served content item (docs/reference/file-formats.md#an-item), its 16 fields in the original's order. Items are
// serialized through it, so any field it does not name (`companies`, extras at any depth) never reaches a client.
import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox'

// pks and company ids are JSON numbers; past 2^53 JSON.parse silently rounds them, so they are refused.
export const SafeInteger = (options: { minimum?: number } = {}) =>
  Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options })

/**
 * X or null; the serializer writes it as `type: [X, 'null']` when `options` are annotations only (serializer-
 * schema.ts).
 */
export const Nullable = <T extends TSchema>(schema: T, options?: SchemaOptions) =>
  Type.Union([schema, Type.Null()], options)

const DisplayImageSchema = Type.Object({
  url: Type.String(),
  width: Type.Integer(),
  height: Type.Integer()
}, { title: 'DisplayImage' })

const LanguageVariantSchema = Type.Object({
  language_code: Type.String(),
  language: Type.String(),
  url: Type.String()
}, { title: 'LanguageVariant' })

const StoryReferenceSchema = Type.Object({
  translated_title: Type.String(),
  translated_url: Type.String()
}, { title: 'StoryReference' })

const CompanyResponseSummarySchema = Type.Object({
  responses: Type.Integer(),
  non_responses: Type.Integer()
}, { title: 'CompanyResponseSummary' })

// The original showed only null for these three fields: any JSON value is served verbatim rather than guessed at.
const OpaqueValue = Type.Unknown({ description: 'null in all data seen; served as the snapshot gives it.' })

export const ContentItemSchema = Type.Object({
  pk: SafeInteger(),
  is_translated: Type.Boolean(),
  translated_languages: Type.Array(LanguageVariantSchema),
  translated_title: Type.String(),
  backdate: Type.String({ format: 'date', description: 'Calendar date, YYYY-MM-DD.' }),
  translated_abstract: Type.String(),
  display_image: Nullable(DisplayImageSchema),
  series: OpaqueValue,
  company_response_summary: CompanyResponseSummarySchema,
  company_response_responded: OpaqueValue,
  responded_to_article: OpaqueValue,
  translated_url: Type.String(),
  stories: Type.Array(StoryReferenceSchema),
  story_item_count: Nullable(Type.Integer()),
  content_type_display: Type.String(),
  untranslated_content_type: Type.String()
}, { title: 'ContentItem' })

export type ContentItem = Static<typeof ContentItemSchema>
