// Versions derived by change files serve, byte for byte, what a full load of the merged
// snapshot serves: random snapshots, random chains of change files (upserts of new and present items,
// deletes of present and absent ones, items moving between dates and companies, new languages).
import t from 'tap'
import { deepStrictEqual, equal } from 'node:assert/strict'
import fc from 'fast-check'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { applyChangesToSnapshot, type ChangeLine, type SnapshotDocument } from '../../../src/snapshot/changes/merge-snapshot.js'
import { readChangeFile } from '../../../src/snapshot/changes/read-change-file.js'
import { loadSnapshotFile } from '../../../src/snapshot/load/load-snapshot.js'
import { deriveVersion } from '../../../src/snapshot/model/derive-version.js'
import type { ItemMemory } from '../../../src/snapshot/model/item-memory.js'
import { Overlay } from '../../../src/snapshot/model/overlay.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { makeItem, memoryFreed } from '../../helpers.js'
import { runs } from '../../property-runs.js'

const LANGUAGES = ['en', 'es', 'pt-br', 'de']
const COMPANIES = [1, 2, 3, 4, 5]

/** Few pks, days and companies: upserts hit present items, days tie (the pk decides), lists overlap. */
const item = fc.record({
  pk: fc.integer({ min: 1, max: 30 }),
  day: fc.integer({ min: 1, max: 4 }),
  companies: fc.array(fc.constantFrom(...COMPANIES), { maxLength: 3 }),
  title: fc.constantFrom('a', 'b', 'ünï', 'a longer title, with more bytes in it')
}).map(({ pk, day, companies, title }): SnapshotItem => makeItem(pk, `2024-01-0${day}`, companies, { translated_title: `${title} ${pk}` }))

const snapshot = fc.dictionary(fc.constantFrom(...LANGUAGES.slice(0, 3)), fc.uniqueArray(item, { selector: i => i.pk, maxLength: 25 }), { minKeys: 1 })
  .map((languages): SnapshotDocument => ({ generated_at: '2026-11-20T09:30:00Z', languages }))

const op: fc.Arbitrary<ChangeLine> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...LANGUAGES), item).map(([language, it]): ChangeLine => ({ op: 'upsert', language, ...it })) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...LANGUAGES), fc.integer({ min: 1, max: 32 })).map(([language, pk]): ChangeLine => ({ op: 'delete', language, pk })) }
)
const changeFiles = fc.array(fc.array(op, { maxLength: 12 }), { minLength: 1, maxLength: 4 })

/** Every page of a sample, as a model serves it: each filter, whole and cut. */
function pagesOf (model: SnapshotModel): string[] {
  const filters = [null, ...COMPANIES.map(c => [c]), [1, 2], [2, 4, 5], [9]]
  return model.languages.flatMap(code => {
    const listing = model.language(code)!
    return filters.flatMap(companies => [[0, 1000], [0, 3], [2, 5], [7, 10]].map(([offset, limit]) => {
      const page = listing.page(companies, offset!, limit!)
      return `${code} ${String(companies)} ${offset}+${limit}: ${page.count} [${page.items.toString()}]`
    }))
  })
}

const dir = await mkdtemp(join(tmpdir(), 'explore-derive-'))
t.teardown(async () => await rm(dir, { recursive: true, force: true }))
let files = 0

async function load (doc: SnapshotDocument): Promise<SnapshotModel> {
  const file = join(dir, `snapshot-${files++}.json`)
  await writeFile(file, JSON.stringify(doc))
  return await loadSnapshotFile(file)
}

async function changeFile (lines: readonly ChangeLine[], id: string): Promise<string> {
  const file = join(dir, `changes-${files++}.jsonl`)
  await writeFile(file, [{ changes: 'explore', version: 1, id }, ...lines].map(line => `${JSON.stringify(line)}\n`).join(''))
  return file
}

t.test('after each change file of a chain, every page equals a full load of the merged snapshot', async t => {
  // Without the collection hint (helpers.ts), the hundreds of versions this retires are collected here, before
  // the next test waits on a finalizer of its own.
  const retired: ItemMemory[] = []
  await fc.assert(fc.asyncProperty(snapshot, changeFiles, async (doc, chain) => {
    let served = await load(doc)
    const applied: ChangeLine[][] = []
    for (const [i, lines] of chain.entries()) {
      const before = served
      served = await deriveVersion(served, await readChangeFile(await changeFile(lines, `c${i}`)))
      applied.push(lines)
      const reference = await load(applyChangesToSnapshot(doc, applied))
      // Thrown, not counted: fast-check shrinks a failing case to its smallest.
      deepStrictEqual(pagesOf(served), pagesOf(reference), `after change file ${i}`)
      deepStrictEqual(served.itemCounts(), reference.itemCounts())
      equal(served.info.version, `${before.info.snapshotVersion ?? before.info.version}+c${i}`)
      before.memory.retire()
      reference.memory.retire()
      retired.push(before.memory, reference.memory)
    }
  }), { numRuns: runs(60) })
  t.pass('60 random chains')
  await memoryFreed(retired, 'the retired versions\' memory')
})

t.test('the version before a change is served unchanged beside it; retiring it frees only what it alone held', async t => {
  const doc: SnapshotDocument = { languages: { en: [makeItem(1, '2024-01-01', [7]), makeItem(2, '2024-01-02', [7, 8])] } }
  const first = await load(doc)
  const pagesBefore = pagesOf(first)
  const second = await deriveVersion(first, await readChangeFile(await changeFile([{ op: 'upsert', language: 'en', ...makeItem(3, '2024-01-03', [8]) }, { op: 'delete', language: 'en', pk: 1 }], 'next')))
  t.same(pagesOf(first), pagesBefore)
  t.same(second.info.changes?.map(c => [c.id, c.upserts, c.deletes, c.absentDeletes]), [['next', 1, 1, 0]])
  t.ok(second.garbageBytes > 0, 'the deleted item\'s bytes are garbage until the next full load')
  first.memory.retire()
  // The first version's chunks are the second's too: its retirement has nothing of its own to wait for.
  await memoryFreed(first.memory)
  t.same(pagesOf(second), pagesOf(await load(applyChangesToSnapshot(doc, [[{ op: 'upsert', language: 'en', ...makeItem(3, '2024-01-03', [8]) }, { op: 'delete', language: 'en', pk: 1 }]]))))
  second.memory.retire()
  await memoryFreed(second.memory)
})

t.test('a list a change concerns is its flat list, shared, with what the change removed and added; flat again once the room is spent', async t => {
  // The bench's change file at 1M touched 540 lists of 821,200 slots: copied whole, 3.3 MB beside its items' 1.4 MB (docs/decisions/026).
  const days = (pk: number) => `2024-0${1 + (pk % 9)}-${String(1 + (pk % 28)).padStart(2, '0')}`
  const doc: SnapshotDocument = { languages: { en: Array.from({ length: 3000 }, (_, i) => makeItem(i + 1, days(i * 7), i % 2 === 0 ? [3] : [3, 4])) } }
  const model = await load(doc)
  const few: ChangeLine[] = [
    { op: 'upsert', language: 'en', ...makeItem(20_000, days(5), [3]) },
    { op: 'upsert', language: 'en', ...makeItem(20_001, days(11), [3, 4]) },
    { op: 'delete', language: 'en', pk: 1500 }
  ]
  const small = await deriveVersion(model, await readChangeFile(await changeFile(few, 'few')))
  const loaded = model.language('en')!
  const derived = small.language('en')!
  const list = derived.changes?.companies.get(3)
  t.equal(derived.columns, loaded.columns, 'the columns are shared: the new items have slots after the ranks')
  t.ok(list instanceof Overlay && list.base?.buffer === loaded.columns.byCompany.get(3)?.buffer, 'company 3\'s list is its flat list, shared')
  t.same([list?.removed.length, list?.added.length, derived.changes?.all.removed.length, derived.changes?.all.added.length], [1, 2, 1, 2])
  // 1,100 deletes: past the room of 3,000 items (187), the next change writes the listing out flat first.
  const many = Array.from({ length: 1100 }, (_, i): ChangeLine => ({ op: 'delete', language: 'en', pk: 1 + 2 * i }))
  const large = await deriveVersion(small, await readChangeFile(await changeFile(many, 'many')))
  const last: ChangeLine[] = [{ op: 'delete', language: 'en', pk: 2 }, { op: 'upsert', language: 'en', ...makeItem(20_002, days(13), [4]) }]
  const again = await deriveVersion(large, await readChangeFile(await changeFile(last, 'again')))
  const flat = again.language('en')!
  t.not(flat.columns, loaded.columns, 'written out flat')
  t.same([flat.columns.size, flat.changes?.all.removed.length, flat.changes?.all.added.length], [large.language('en')!.size, 1, 1])
  for (const [version, changes] of [[small, [few]], [large, [few, many]], [again, [few, many, last]]] as const) {
    const reference = await load(applyChangesToSnapshot(doc, changes))
    t.same(pagesOf(version), pagesOf(reference))
    for (const companies of [[3], [4], [3, 4]]) t.equal(version.language('en')?.page(companies, 0, 4000).items.toString(), reference.language('en')?.page(companies, 0, 4000).items.toString(), `every item of ${String(companies)}`)
    reference.memory.retire()
  }
  for (const version of [model, small, large, again]) version.memory.retire()
})

t.test('a change gives the event loop a turn between its binary searches, however many land in one list', async t => {
  // One company's long list and 300 items added to it: each needs a search of the language's order. At 1M one
  // search cost up to ~50 µs under load, and 256 to a step held the loop over 20 ms (docs/decisions/026).
  const days = (pk: number) => `2024-0${1 + (pk % 9)}-${String(1 + (pk % 28)).padStart(2, '0')}`
  const doc: SnapshotDocument = { languages: { en: Array.from({ length: 3000 }, (_, i) => makeItem(i + 1, days(i * 7), [3])) } }
  const model = await load(doc)
  const added = Array.from({ length: 300 }, (_, i): ChangeLine => ({ op: 'upsert', language: 'en', ...makeItem(10_000 + i, days(i * 13), [3]) }))
  const changes = await readChangeFile(await changeFile(added, 'many'))
  let turns = 0
  let counting = true
  const tick = (): void => {
    turns++
    if (counting) setImmediate(tick)
  }
  setImmediate(tick)
  // A slice of 0 ms: the derive pauses at every point where it may (the pacer's clock has always moved on by
  // the next step), so the turns counted are its pause points: one per search, 300, and a few others.
  const derived = await deriveVersion(model, changes, new Date(), 0)
  counting = false
  t.ok(turns >= added.length, `${turns} turns of the event loop while 300 items were placed (at least one per search: 300)`)
  const reference = await load(applyChangesToSnapshot(doc, [added]))
  t.same(pagesOf(derived), pagesOf(reference))
  t.same(derived.language('en')?.page([3], 0, 4000).items.toString(), reference.language('en')?.page([3], 0, 4000).items.toString(), 'the whole list of the company concerned')
  for (const version of [model, derived, reference]) version.memory.retire()
})

t.test('an item upserted again and again spends the room by its slots alone: the listing is written out flat first, pages unchanged', async t => {
  // Each upsert takes a new slot, while the lists' overlay stays one item long: 40 files spend a room of 16.
  const doc: SnapshotDocument = { languages: { en: Array.from({ length: 20 }, (_, i) => makeItem(i + 1, '2024-01-02', [1 + (i % 3)])) } }
  let served = await load(doc)
  const columns = new Set([served.language('en')!.columns])
  const applied: ChangeLine[][] = []
  for (let i = 0; i < 40; i++) {
    const lines: ChangeLine[] = [{ op: 'upsert', language: 'en', ...makeItem(7, `2024-01-0${1 + (i % 3)}`, [1 + (i % 3)], { translated_title: `take ${i}` }) }]
    const before = served
    served = await deriveVersion(served, await readChangeFile(await changeFile(lines, `again-${i}`)))
    before.memory.retire()
    applied.push(lines)
    columns.add(served.language('en')!.columns)
  }
  const reference = await load(applyChangesToSnapshot(doc, applied))
  t.same(pagesOf(served), pagesOf(reference))
  t.ok(columns.size > 1, `written out flat ${columns.size - 1} times in 40 files`)
  for (const version of [served, reference]) version.memory.retire()
})
