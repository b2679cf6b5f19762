// A micro-benchmark of the model's page path (no HTTP): the cost of making a page's views, unfiltered and
// by company, on a model built in memory of N items. For docs/decisions/024: whether addressing items by
// slot (a change file's versions) keeps pages as fast as ranks did. Brief on a shared machine:
// `npx tsx bench/page-speed.ts 1000000 [ROUNDS]`.
import { SnapshotModelBuilder } from '../src/snapshot/model/build-model.js'
import type { SnapshotItem } from '../src/schemas/snapshot.js'
import type { LanguageListing } from '../src/snapshot/model/snapshot-model.js'

const size = Number(process.argv[2] ?? 1_000_000)
const rounds = Number(process.argv[3] ?? 200_000)
const COMPANIES = 50_000

function item (pk: number): SnapshotItem {
  const day = 1 + (pk * 7919) % 3650
  const date = new Date(Date.UTC(2016, 0, day)).toISOString().slice(0, 10)
  return {
    pk,
    is_translated: true,
    translated_languages: [],
    translated_title: `Item ${pk} about something newsworthy`,
    backdate: date,
    translated_abstract: 'An abstract of a few words, as most items have.',
    display_image: null,
    series: null,
    company_response_summary: { responses: 0, non_responses: 0 },
    company_response_responded: null,
    responded_to_article: null,
    translated_url: `/en/latest-news/item-${pk}/`,
    stories: [],
    story_item_count: null,
    content_type_display: 'Article',
    untranslated_content_type: 'articlepage',
    companies: [(pk * 31) % COMPANIES, (pk * 17) % COMPANIES]
  }
}

/** A listing's pages, `rounds` of them at random offsets, through views() as an uncached answer sends them. */
function timePages (listing: LanguageListing, companies: number[] | null, label: string): void {
  const count = listing.page(companies, 0, 1).count
  let bytes = 0
  const started = performance.now()
  for (let i = 0; i < rounds; i++) {
    const offset = (i * 7919) % Math.max(1, count - 20)
    const page = listing.page(companies, offset, 20)
    for (const view of page.items.views()) bytes += view.length
  }
  const ms = performance.now() - started
  console.log(`${label}: ${(1000 * ms / rounds).toFixed(2)} µs a page of 20 (${count} items; ${bytes} bytes)`)
}

export async function buildListing (n: number): Promise<LanguageListing> {
  const builder = new SnapshotModelBuilder()
  for (let pk = 1; pk <= n; pk++) builder.add('en', pk, item(pk))
  const model = await builder.buildInSlices({ source: 'bench', version: 'bench', generatedAt: null, loadedAt: new Date() })
  return model.language('en') as LanguageListing
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const listing = await buildListing(size)
  for (let round = 0; round < 2; round++) {
    timePages(listing, null, 'unfiltered')
    timePages(listing, [7], 'one company')
    timePages(listing, [7, 8, 9], 'three companies (a cached union)')
  }
}
