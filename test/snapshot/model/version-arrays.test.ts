// A version's arrays: a listing's columns are declared once (src/snapshot/model/version-arrays.ts): each holds, at every
// slot, what its fill gives the item there, however the item came (a builder, a parse thread, a change file); none
// lacks its fill. A version's parts (version-parts.ts) make the model they were taken from again.
import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { readChangeFile } from '../../../src/snapshot/changes/read-change-file.js'
import { SnapshotLoader } from '../../../src/snapshot/load/load-snapshot.js'
import { ParsePool } from '../../../src/snapshot/load/parse-pool.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import { deriveVersion } from '../../../src/snapshot/model/derive-version.js'
import { renderItem } from '../../../src/snapshot/model/item-bytes.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { currentRendering, FINGERPRINT, renderingFingerprint } from '../../../src/snapshot/images/image-fingerprint.js'
import {
  COLUMN_NAMES, COLUMNS, PART_KINDS, columnNames, kindOf, type ColumnDeclaration
} from '../../../src/snapshot/model/version-arrays.js'
import { modelOf, partsOf, swapArrays } from '../../../src/snapshot/model/version-parts.js'
import { makeItem, modelOf as load, poolForAnySize, tempDir } from '../../helpers.js'

// src/snapshot/model/version-arrays.ts: the declared columns, each holding its fill however the version was made.
t.test('a column declared without its fill is refused, so no version loads with a column of zeros', async t => {
  t.same(columnNames(COLUMNS), Object.keys(COLUMNS), 'the declared columns, in order')
  const translatedOf = { kinds: ['u8'] } as Partial<ColumnDeclaration>
  t.throws(() => columnNames({ ...COLUMNS, translatedOf }), /the column translatedOf is declared without its kinds and its fill/)
  t.throws(() => columnNames({ ...COLUMNS, translatedOf: { fill: () => 1 } }), /translatedOf/, 'nor without its kinds')
  // @ts-expect-error: the declaration's type asks for the fill too; typecheck fails if it stops asking.
  const typed: ColumnDeclaration = { kinds: ['u8'] }
  t.notOk(typed.fill, 'a declaration without its fill does not typecheck')
})

t.test('an image\'s fingerprint digests the declared columns: their names, their order and their kinds', async t => {
  const current = currentRendering()
  t.equal(current.parts, PART_KINDS)
  t.same(Object.entries(PART_KINDS.columns), COLUMN_NAMES.map(name => [name, COLUMNS[name].kinds]))
  const reversed = { ...PART_KINDS, columns: Object.fromEntries(Object.entries(PART_KINDS.columns).reverse()) }
  t.not(renderingFingerprint({ ...current, parts: reversed }), FINGERPRINT, 'in another order, another fingerprint')
})

const items = Array.from({ length: 60 }, (_, i) =>
  makeItem(i + 1, `2024-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`, [1 + (i % 4)], { translated_title: 'é'.repeat(i) }))

/** Every served slot's columns against their declaration: its bytes are the item's, each column what its fill gives. */
function checkColumns (t: Test, model: SnapshotModel, byPk: ReadonlyMap<number, SnapshotItem>): void {
  const listing = model.language('en')!
  const { columns, store: { chunks } } = listing
  for (const name of COLUMN_NAMES) t.ok(COLUMNS[name].kinds.includes(kindOf(columns[name]) as never), `${name} of a declared kind`)
  let checked = 0
  for (const slot of listing.all.slots(0, listing.size)) {
    const at = { chunk: columns.chunkOf[slot]!, start: columns.startOf[slot]!, length: columns.lengthOf[slot]! }
    const item = byPk.get(columns.pkOf[slot]!)
    if (item === undefined) {
      t.fail(`slot ${slot}: pk ${columns.pkOf[slot]} is no item of the version`)
      continue
    }
    const bytes = chunks[at.chunk]!.toString('utf8', at.start, at.start + at.length)
    if (bytes !== renderItem(item)) t.fail(`slot ${slot}: the bytes of pk ${item.pk} are not where its columns say`)
    for (const name of COLUMN_NAMES) {
      if (columns[name][slot] !== COLUMNS[name].fill(item, at)) t.fail(`slot ${slot}: ${name} is not its fill`)
    }
    checked++
  }
  t.equal(checked, listing.size, 'every slot served')
}

const byPk = new Map(items.map(item => [item.pk, item]))

t.test('built from items on this thread, every column holds its fill', async t => {
  const builder = new SnapshotModelBuilder()
  items.forEach((item, index) => builder.add('en', index, item))
  checkColumns(t, builder.build({ source: 'test', version: 'v', generatedAt: null, loadedAt: new Date() }), byPk)
})

t.test('parsed on a parse thread in small batches (many chunks), then changed by a change file, every column holds its fill', async t => {
  const pool = new ParsePool({ threads: 1 })
  t.teardown(async () => await pool.close())
  const loader = new SnapshotLoader({ pool: poolForAnySize(pool), batchBytes: 2048 })
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.jsonl')
  await writeFile(file, items.map(item => `${JSON.stringify({ language: 'en', ...item })}\n`).join(''))
  const loaded = await loader.load(file)
  t.ok(loaded.language('en')!.store.chunks.length > 3, 'items in several chunks')
  checkColumns(t, loaded, byPk)

  const upserts = [makeItem(5, '2030-01-01', [9], { translated_title: 'changed' }), makeItem(500, '2020-02-02', [1])]
  const changes = join(dir, 'changes.jsonl')
  await writeFile(changes, [{ changes: 'explore', version: 1, id: 'c1' }, { op: 'delete', language: 'en', pk: 7 },
    ...upserts.map(item => ({ op: 'upsert', language: 'en', ...item }))].map(line => `${JSON.stringify(line)}\n`).join(''))
  const derived = await deriveVersion(loaded, await readChangeFile(changes, { loader }))
  const after = new Map(byPk)
  after.delete(7)
  for (const item of upserts) after.set(item.pk, item)
  t.equal(derived.language('en')!.size, after.size)
  checkColumns(t, derived, after)
})

t.test('a listing written flat again by a change file keeps each column as narrow as its numbers, and wide once wide', async t => {
  const dir = await tempDir(t)
  let files = 0
  /** `upserts` more than the listing's room: it is written flat before and after. */
  const change = async (model: SnapshotModel, upserts: SnapshotItem[]): Promise<SnapshotModel> => {
    const file = join(dir, `changes-${files++}.jsonl`)
    await writeFile(file, [{ changes: 'explore', version: 1, id: `c${files}` }, ...upserts.map(item => ({ op: 'upsert', language: 'en', ...item }))]
      .map(line => `${JSON.stringify(line)}\n`).join(''))
    return await deriveVersion(model, await readChangeFile(file))
  }
  /** The two that narrow (ADR 016). */
  const kinds = (model: SnapshotModel): string[] => {
    const { chunkOf, lengthOf } = model.language('en')!.columns
    return [`chunkOf ${kindOf(chunkOf)}`, `lengthOf ${kindOf(lengthOf)}`]
  }
  const narrow = ['chunkOf u16', 'lengthOf u16']
  const loaded = await load({ languages: { en: items } })
  t.same(kinds(loaded), narrow, 'loaded')
  const more = Array.from({ length: 20 }, (_, i) => makeItem(1000 + i, '2025-01-01', [1]))
  const flat = await change(loaded, more)
  t.same(kinds(flat), narrow, 'written flat again')
  const long = makeItem(2000, '2025-01-02', [1], { translated_title: 'x'.repeat(70_000) })
  const wide = await change(flat, [long, ...more.map(item => ({ ...item, pk: item.pk + 100 }))])
  t.same(kinds(wide), ['chunkOf u16', 'lengthOf u32'], 'an item longer than 64 KiB')
  const again = await change(wide, more.map(item => ({ ...item, pk: item.pk + 200 })))
  t.equal(kindOf(again.language('en')!.columns.lengthOf), 'u32', 'wide once wide')
  const all = new Map([...byPk, ...more.map(item => [item.pk, item] as const), [long.pk, long] as const,
    ...more.map(item => [item.pk + 100, { ...item, pk: item.pk + 100 }] as const),
    ...more.map(item => [item.pk + 200, { ...item, pk: item.pk + 200 }] as const)])
  checkColumns(t, again, all)
})

// src/snapshot/model/version-parts.ts: a version as plain parts, the one description a serving thread is handed.
function pagesOf (model: SnapshotModel): string[] {
  return model.languages.flatMap(code => [null, [1], [2], [1, 2], [3]].flatMap(companies => [[0, 100], [1, 2]].map(([offset, limit]) => {
    const page = model.language(code)!.page(companies, offset!, limit!)
    return `${code} ${String(companies)} ${offset}+${limit}: ${page.count} [${page.items.toString()}]`
  })))
}

t.test('parts of a loaded and of a derived version make the same version again', async t => {
  const loaded = await load({ languages: { en: Array.from({ length: 40 }, (_, i) => makeItem(i + 1, `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`, [1 + (i % 3)])), es: [] } })
  const file = join(await tempDir(t), 'changes.jsonl')
  const lines = [{ changes: 'explore', version: 1, id: 'c1' }, { op: 'delete', language: 'en', pk: 3 }, { op: 'upsert', language: 'en', ...makeItem(99, '2024-02-01', [1, 2]) }]
  await writeFile(file, lines.map(line => `${JSON.stringify(line)}\n`).join(''))
  const derived = await deriveVersion(loaded, await readChangeFile(file))
  for (const model of [loaded, derived]) {
    const again = modelOf(partsOf(model))
    t.same(pagesOf(again), pagesOf(model), model.info.version)
    t.same(again.info.contentVersion, model.info.contentVersion)
    t.equal(again.garbageBytes, model.garbageBytes)
  }
})

t.test('swapArrays reaches every array of the parts, and nothing else', async t => {
  const model = await load({ languages: { en: [makeItem(1, '2024-01-01', [1])] } })
  const parts = partsOf(model)
  let arrays = 0
  const swapped = swapArrays(parts, ArrayBuffer.isView as (value: unknown) => value is Uint8Array, () => ++arrays)
  // 1 chunk, and per listing: 5 columns and 4 arrays of company lists.
  t.equal(arrays, 1 + 9)
  t.same(swapped.listings[0]?.companies, { keys: 7, slots: 8, starts: 9, ranks: 10 })
  t.equal(swapped.info.loadedAt, parts.info.loadedAt, 'the info as it is')
})
