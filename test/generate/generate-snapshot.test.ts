import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateSnapshot, writeSnapshot } from '../../src/generate/write-snapshot.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { tempDir } from '../helpers.js'

t.test('the committed default snapshot is exactly what the generator writes', async t => {
  const file = join(await tempDir(t), 'snapshot.json')
  await writeSnapshot(file)
  t.equal((await readFile(file)).equals(await readFile(join(import.meta.dirname, '..', '..', 'data', 'snapshot.json'))), true,
    'data/snapshot.json is reproducible: npm run generate')
})

t.test('the default snapshot is valid and as varied as the demo needs', async t => {
  const model = await loadSnapshotFile(join(import.meta.dirname, '..', '..', 'data', 'snapshot.json'))
  const counts = model.itemCounts()
  t.ok(counts.en! >= 300, `${counts.en} items in en`)
  t.equal(Object.keys(counts).length, 3)
  const snapshot = generateSnapshot()
  const en = snapshot.languages.en!
  const perCompany = new Map<number, number>()
  for (const item of en) for (const c of new Set(item.companies)) perCompany.set(c, (perCompany.get(c) ?? 0) + 1)
  const sizes = [...perCompany.values()].sort((a, b) => b - a)
  t.ok(perCompany.size >= 25, `${perCompany.size} companies`)
  t.ok(sizes[0]! >= 10 * sizes[sizes.length - 1]!, `uneven company sizes: ${sizes[0]} down to ${sizes[sizes.length - 1]}`)
  t.ok(en.some(i => i.companies.length === 0), 'items linked to no company')
  t.ok(en.some(i => i.companies.length >= 2), 'items linked to several companies')
  t.ok(new Set(en.map(i => i.backdate)).size < en.length * 0.9, 'many items share a backdate')
  t.ok(en.some(i => !i.is_translated && i.translated_languages.length > 0), 'items in another language with variants')
  const accented = /[À-ÿ]/
  t.ok(en.some(i => accented.test(i.translated_title)) && en.some(i => accented.test(i.translated_url)), 'accented titles and URLs')
  t.ok(en.some(i => /^["“]/.test(i.translated_abstract)), 'quoted abstracts')
  t.ok(en.some(i => i.display_image === null) && en.some(i => i.display_image !== null), 'with and without images')
  t.ok(en.some(i => i.stories.length > 0) && en.some(i => i.stories.length === 0), 'with and without stories')
})

t.test('the same seed gives the same snapshot; another seed another', async t => {
  t.same(generateSnapshot({ seed: 7, items: 50 }), generateSnapshot({ seed: 7, items: 50 }))
  t.notSame(generateSnapshot({ seed: 7, items: 50 }), generateSnapshot({ seed: 8, items: 50 }))
})

t.test('large snapshots are streamed one item per line and equal the in-memory ones', async t => {
  const file = join(await tempDir(t), 'big.json')
  const result = await writeSnapshot(file, { seed: 3, items: 2000, format: 'compact' })
  t.same(result.items, { en: 2000, es: 700, fr: 500 })
  const raw = await readFile(file)
  t.same(JSON.parse(raw.toString()), generateSnapshot({ seed: 3, items: 2000 }))
  t.same((await loadSnapshotFile(file)).itemCounts(), { en: 2000, es: 700, fr: 500 })
})
