// A micro-benchmark of the model's page path (no HTTP) and of a change file applied to it: the cost of
// making a page's views, unfiltered and by company, on a model built in memory of N items; then a change
// file of 1,000 upserts and 100 deletes derived from it (time, longest slice) and the same pages on the
// derived version. For docs/decisions/024. Brief on a shared machine: `npx tsx bench/page-speed.ts 1000000 [ROUNDS]`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SnapshotModelBuilder } from '../src/snapshot/model/build-model.js'
import type { SnapshotItem } from '../src/schemas/snapshot.js'
import type { LanguageListing, SnapshotModel } from '../src/snapshot/model/snapshot-model.js'
import { readChangeFile } from '../src/snapshot/changes/read-change-file.js'
import { deriveVersion, prepareForChanges } from '../src/snapshot/model/derive-version.js'

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

export async function buildModel (n: number): Promise<SnapshotModel> {
  const builder = new SnapshotModelBuilder()
  for (let pk = 1; pk <= n; pk++) builder.add('en', pk, item(pk))
  return await builder.buildInSlices({ source: 'bench', version: 'bench', generatedAt: null, loadedAt: new Date() })
}

/** A change file's text: `upserts` items (half new, half replacing present ones, moved in date and company), `deletes` deletes. */
export function changeFileText (n: number, upserts: number, deletes: number, file = 0): string {
  const lines = [JSON.stringify({ changes: 'explore', version: 1, id: `bench-${file}` })]
  for (let i = 0; i < upserts; i++) {
    const pk = i % 2 === 0 ? n + 1 + i + file * upserts : 1 + ((i * 104729 + file * 7) % n)
    lines.push(JSON.stringify({ op: 'upsert', language: 'en', ...item(pk), backdate: '2026-01-01', companies: [i % 100] }))
  }
  for (let i = 0; i < deletes; i++) {
    lines.push(JSON.stringify({ op: 'delete', language: 'en', pk: 1 + ((i * 7919 + 13 + file * 3) % n) }))
  }
  return lines.map(line => `${line}\n`).join('')
}

/** The longest time the event loop waited for a turn while `work` ran. */
async function longestStall<T> (work: () => Promise<T>): Promise<{ result: T, ms: number, stallMs: number }> {
  let longest = 0
  let last = performance.now()
  let running = true
  const tick = (): void => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  const started = performance.now()
  const result = await work()
  const ms = performance.now() - started
  running = false
  return { result, ms, stallMs: Math.max(longest, performance.now() - last) }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const model = await buildModel(size)
  // The items were made on this thread (a service parses them on its pool's): their garbage collected
  // first, so that a collection of it is not counted as the change's stall. Run with --expose-gc.
  ;(globalThis as { gc?: () => void }).gc?.()
  const listing = model.language('en') as LanguageListing
  for (let round = 0; round < 2; round++) {
    timePages(listing, null, 'unfiltered')
    timePages(listing, [7], 'one company')
    timePages(listing, [7, 8, 9], 'three companies (a cached union)')
  }
  const prepared = await longestStall(async () => await prepareForChanges(model))
  console.log(`made ready for changes: ${prepared.ms.toFixed(0)} ms, longest stall ${prepared.stallMs.toFixed(1)} ms`)
  const dir = await mkdtemp(join(tmpdir(), 'page-speed-'))
  const file = join(dir, 'bench.jsonl')
  await writeFile(file, changeFileText(size, 1000, 100))
  // Once to compile what a service compiles at its start (the checks, the serializer), then measured.
  await readChangeFile(file)
  const read = await longestStall(async () => await readChangeFile(file, { serving: true }))
  console.log(`a change file of 1,000 upserts and 100 deletes read: ${read.ms.toFixed(0)} ms, longest stall ${read.stallMs.toFixed(1)} ms`)
  let derived = await longestStall(async () => await deriveVersion(model, read.result))
  console.log(`applied: ${derived.ms.toFixed(0)} ms, longest stall ${derived.stallMs.toFixed(1)} ms`)
  // FILES=n: n - 1 more files on top, each another 1,000 upserts and 100 deletes.
  for (let n = 1; n < Number(process.env.FILES ?? 1); n++) {
    await writeFile(file, changeFileText(size, 1000, 100, n))
    const changes = await readChangeFile(file, { serving: true })
    const before = derived.result
    derived = await longestStall(async () => await deriveVersion(before, changes))
    console.log(`file ${n + 1} applied: ${derived.ms.toFixed(0)} ms, longest stall ${derived.stallMs.toFixed(1)} ms`)
  }
  await rm(dir, { recursive: true })
  const next = derived.result.language('en') as LanguageListing
  for (let round = 0; round < 2; round++) {
    timePages(next, null, 'derived, unfiltered')
    timePages(next, [7], 'derived, one company')
    timePages(next, [7, 8, 9], 'derived, three companies (a cached union)')
  }
}
