// One explore page of the source: its URL, and its answer checked against the service's own schemas, so the capture
// stops at the first answer that is something else.
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../schemas/formats.js'
import { ContentItemSchema, type ContentItem } from '../schemas/content-item.js'
import { ExplorePageSchema } from '../schemas/explore-response.js'
import { CaptureError, NotExploreError } from '../errors.js'

// The envelope first, items unchecked: a wrong envelope is another API, a wrong item one the snapshot cannot hold.
const envelopeCheck = TypeCompiler.Compile(Type.Composite([
  Type.Omit(ExplorePageSchema, ['results']),
  Type.Object({ results: Type.Array(Type.Unknown()) })
]))
const itemCheck = TypeCompiler.Compile(ContentItemSchema)

export interface PageQuery {
  /** null: all. */
  company: number | null
  limit: number
  offset: number
}

export interface SourcePage {
  url: string
  count: number
  next: string | null
  results: ContentItem[]
}

/** `{base}/{lang}/api/internal/explore/?companies=…&limit=…&offset=…`, keys sorted as DRF's links are. */
export function exploreUrl (base: string, language: string, { company, limit, offset }: PageQuery): string {
  const query = [
    ...(company === null ? [] : [`companies=${company}`]),
    `limit=${limit}`,
    // DRF's own first-page links carry no offset; caches in front of the source may know them.
    ...(offset === 0 ? [] : [`offset=${offset}`])
  ]
  return `${base}/${language}/api/internal/explore/?${query.join('&')}`
}

/** Throws NotExploreError or CaptureError naming the URL. */
export function readPage (url: string, body: unknown, query: PageQuery): SourcePage {
  if (!envelopeCheck.Check(body)) {
    const first = envelopeCheck.Errors(body).First()
    const where = first === undefined || first.path === '' ? '' : `${first.path}: `
    throw new NotExploreError(
      url, `the JSON is not a page of {count, next, previous, results} (${where}${first?.message ?? 'not an object'})`
    )
  }
  if (body.results.length > query.limit) {
    throw new NotExploreError(url, `${body.results.length} results for limit=${query.limit}`)
  }
  for (const [index, item] of body.results.entries()) {
    if (itemCheck.Check(item)) continue
    const first = itemCheck.Errors(item).First()
    const pk = (item as { pk?: unknown } | null)?.pk
    throw new CaptureError(
      `GET ${url}: results[${index}]${pk === undefined ? '' : ` (pk ${JSON.stringify(pk)})`} is not a content item the snapshot can hold: ${first?.path ?? ''} ${first?.message ?? ''}`.trimEnd()
    )
  }
  return { url, count: body.count, next: body.next, results: body.results as ContentItem[] }
}
