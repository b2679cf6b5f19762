// What an image's bytes mean besides its snapshot: the format, a version's arrays and their kinds, the item schemas,
// the serializer that renders items and the builder that orders them; one fingerprint of them, computed at module load
// (ADR 043).
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { SnapshotItemSchema, type SnapshotItem } from '../../schemas/snapshot.js'
import { asBuffer, parseBatch } from '../load/parse-batch.js'
import { SnapshotModelBuilder } from '../model/build-model.js'
import { ITEM_SERIALIZER, ItemBytes, renderItem } from '../model/item-bytes.js'
import { PART_KINDS, kindOf, type View } from '../model/version-arrays.js'
import { partsOf } from '../model/version-parts.js'

/** Another is refused (and the snapshot parsed). 2: `made.fingerprint` decides, not the release. */
export const IMAGE_FORMAT = 2

/** Everything the served bytes and arrays are made by, as the code declares it; a test may change any of it. */
export interface Rendering {
  format: number
  parts: unknown
  itemSchema: unknown
  serializer: { schema: unknown, options: unknown, library: string }
  /** Run on SAMPLES: catches what the declaration does not say (the escapes, the library's own output). */
  render: (item: SnapshotItem) => string
  /** The arrays a version loaded from `items` is made of (the served order, date keys, company tables), as JSON. */
  build: (items: readonly SnapshotItem[]) => string
}

/** Odd values on purpose: a float in an integer field shows the rounding, U+2028 the escapes, nesting opaque fields. */
const SAMPLES: SnapshotItem[] = [{
  pk: 9007199254740991,
  is_translated: true,
  translated_languages: [{ language_code: 'fr', language: 'Français', url: '/fr/a/' }],
  translated_title: 'Nestlé "quoted" \\ \u2028 \u2029 \u0000 é😀',
  backdate: '2026-11-20',
  translated_abstract: '',
  display_image: { url: '/i.png', width: 1.5, height: -2 },
  series: { nested: [1, 'two', null, { deep: true }] },
  company_response_summary: { responses: 3, non_responses: 0 },
  company_response_responded: null,
  responded_to_article: [],
  translated_url: '/en/x/',
  stories: [{ translated_title: 'a story', translated_url: '/en/s/' }],
  story_item_count: 2,
  content_type_display: 'Article',
  untranslated_content_type: 'articlepage',
  companies: [3, 7],
  extra: 'never served'
} as SnapshotItem, {
  pk: -1,
  is_translated: false,
  translated_languages: [],
  translated_title: '',
  backdate: '1999-01-01',
  translated_abstract: 'x'.repeat(40),
  display_image: null,
  series: null,
  company_response_summary: { responses: 0, non_responses: 12 },
  company_response_responded: 'yes',
  responded_to_article: 0.1,
  translated_url: '',
  stories: [],
  story_item_count: null,
  content_type_display: 'Story',
  untranslated_content_type: 'storypage',
  companies: []
}]

/** For the builder: dates alike and apart, a pk above 2^32, a company of three items, one of none, two languages. */
const LOADABLE: SnapshotItem = { ...SAMPLES[0] as SnapshotItem, display_image: { url: '/i.png', width: 640, height: 480 } }
export const LOADED: readonly SnapshotItem[] = [
  LOADABLE,
  { ...LOADABLE, pk: 7, companies: [7] },
  { ...LOADABLE, pk: 8, backdate: '2027-01-31', companies: [3, 70000] },
  { ...LOADABLE, pk: 9, backdate: '1999-12-01', companies: [] },
  { ...LOADABLE, pk: 2 ** 40, backdate: '2026-11-20', companies: [3] }
]

/** A digest of `rendering`: two codes that render alike share it, and an image is read only by code of its own. */
export function renderingFingerprint (rendering: Rendering): string {
  const { render, build, ...declared } = rendering
  const rendered = SAMPLES.map(item => attempt(() => render(item)))
  const built = attempt(() => build(LOADED))
  return createHash('sha256').update(JSON.stringify({ ...declared, rendered, built })).digest('base64url').slice(0, 22)
}

function attempt<T> (run: () => T): T | string {
  try {
    return run()
  } catch (error) {
    return `throws ${(error as Error).message}`
  }
}

/** As a load makes them: the lines parsed and merged into the builder; each array as its kind and bytes. */
function builtArrays (items: readonly SnapshotItem[]): string {
  const lines = items.map((item, i) => JSON.stringify({ ...item, language: i % 2 === 0 ? 'en' : 'fr' })).join('\n')
  const batch = parseBatch({ kind: 'lines', bytes: Buffer.from(lines), first: true }, new ItemBytes(0))
  if (batch.problems.length > 0) throw new Error(`the samples do not load: ${batch.problems[0]?.text}`)
  const builder = new SnapshotModelBuilder()
  const chunk = builder.chunk(asBuffer(batch.bytes))
  for (let i = 0; i < batch.at.length; i++) {
    builder.addRendered(batch.languages[batch.language[i] as number] as string, i, batch, i, chunk)
  }
  const { listings, chunks } = partsOf(builder.build({ source: '', version: '', generatedAt: null, loadedAt: new Date(0) }))
  const bytes = (view: View): string =>
    `${kindOf(view)} ${Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64')}`
  const arrays = (_: string, value: unknown): unknown => ArrayBuffer.isView(value) ? bytes(value as View) : value
  return JSON.stringify({ chunks: chunks.map(bytes), listings }, arrays)
}

/** This code's. */
export function currentRendering (): Rendering {
  const library = (createRequire(import.meta.url)('fast-json-stringify/package.json') as { version: string }).version
  return {
    format: IMAGE_FORMAT,
    parts: PART_KINDS,
    itemSchema: SnapshotItemSchema,
    serializer: { schema: ITEM_SERIALIZER.schema, options: ITEM_SERIALIZER.options, library },
    render: renderItem,
    build: builtArrays
  }
}

export const FINGERPRINT = renderingFingerprint(currentRendering())
