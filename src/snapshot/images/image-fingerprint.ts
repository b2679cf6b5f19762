// What an image's bytes mean besides its snapshot: the format, a version's arrays and their kinds, the item schemas and
// the serializer that renders items; one fingerprint of them, computed at module load (ADR 042).
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { SnapshotItemSchema, type SnapshotItem } from '../../schemas/snapshot.js'
import { ITEM_SERIALIZER, renderItem } from '../model/item-bytes.js'
import { PART_KINDS } from '../model/version-arrays.js'

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

/** A digest of `rendering`: two codes that render alike share it, and an image is read only by code of its own. */
export function renderingFingerprint (rendering: Rendering): string {
  const { render, ...declared } = rendering
  const rendered = SAMPLES.map(item => {
    try {
      return render(item)
    } catch (error) {
      return `throws ${(error as Error).message}`
    }
  })
  return createHash('sha256').update(JSON.stringify({ ...declared, rendered })).digest('base64url').slice(0, 22)
}

/** This code's. */
export function currentRendering (): Rendering {
  const library = (createRequire(import.meta.url)('fast-json-stringify/package.json') as { version: string }).version
  return {
    format: IMAGE_FORMAT,
    parts: PART_KINDS,
    itemSchema: SnapshotItemSchema,
    serializer: { schema: ITEM_SERIALIZER.schema, options: ITEM_SERIALIZER.options, library },
    render: renderItem
  }
}

export const FINGERPRINT = renderingFingerprint(currentRendering())
