// The model builder: built in one go or in slices that give the event loop turns, the same model.
import t from 'tap'
import fc from 'fast-check'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { makeItem } from '../../helpers.js'
import { runs } from '../../property-runs.js'

const info = { source: 'x', version: 'v', generatedAt: null, loadedAt: new Date(0) }

function builderOf (items: Array<[number, string, number[]]>): SnapshotModelBuilder {
  const builder = new SnapshotModelBuilder()
  builder.language('en')
  items.forEach(([pk, backdate, companies], index) => builder.add('en', index, makeItem(pk, backdate, companies)))
  return builder
}

function served (model: SnapshotModel, companies: number[] | null): number[] {
  const page = model.language('en')!.page(companies, 0, 1_000_000)
  return JSON.parse(`[${page.items.toString()}]`).map((item: { pk: number }) => item.pk)
}

t.test('in slices or in one go: the same order, newest first then pk descending, and the same company lists', async t => {
  const dates = ['2024-01-01', '2024-01-02', '2023-12-31', '2024-02-29']
  await fc.assert(fc.asyncProperty(
    fc.uniqueArray(fc.integer({ min: 1, max: 1e6 }), { maxLength: 300 }).chain(pks => fc.tuple(fc.constant(pks),
      fc.array(fc.tuple(fc.constantFrom(...dates), fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { maxLength: 3 })), { minLength: pks.length, maxLength: pks.length }))),
    async ([pks, rest]) => {
      const items = pks.map((pk, i) => [pk, rest[i]![0], rest[i]![1]] as [number, string, number[]])
      const expected = [...items].sort((a, b) => b[1].localeCompare(a[1]) || b[0] - a[0])
      const whole = builderOf(items).build(info)
      const sliced = await builderOf(items).buildInSlices(info, 0)
      for (const companies of [null, [0], [1, 4], [5]]) {
        const want = expected.filter(([, , linked]) => companies === null || linked.some(c => companies.includes(c))).map(([pk]) => pk)
        t.same(served(whole, companies), want)
        t.same(served(sliced, companies), want)
      }
    }), { numRuns: runs(60) })
})

t.test('a large build gives the event loop turns, and keeps every key past its columns\' block boundaries', async t => {
  // 140,000 items: past two of the builder's 65,536-entry blocks. pks and company ids past 2^32 (safe
  // integers, negative ones too, unrelated to the order of the file) must come back exact.
  const items = Array.from({ length: 140_000 }, (_, i) => [(i % 2 === 0 ? 1 : -1) * (2 ** 33 * ((i * 7919) % 140_001) + (i % 7)), `2024-0${1 + (i % 9)}-1${i % 10}`, [i % 97, 2 ** 45 + (i % 3)]] as [number, string, number[]])
  const builder = builderOf(items)
  let turns = 0
  let building = true
  const tick = () => { if (building) { turns++; setImmediate(tick) } }
  setImmediate(tick)
  const model = await builder.buildInSlices(info, 1)
  building = false
  t.equal(model.itemCounts().en, 140_000)
  t.ok(turns > 2, `${turns} turns of the event loop during the build`)
  const expected = [...items].sort((a, b) => b[1].localeCompare(a[1]) || b[0] - a[0]).map(([pk]) => pk)
  t.same(served(model, null), expected, 'newest first, then pk descending')
  const sorted = [...items].sort((a, b) => b[1].localeCompare(a[1]) || b[0] - a[0])
  t.same(served(model, [2 ** 45 + 1]), sorted.filter(([, , companies]) => companies.includes(2 ** 45 + 1)).map(([pk]) => pk), 'a company id past 2^32')
  t.same(served(model, [96]), sorted.filter(([, , companies]) => companies.includes(96)).map(([pk]) => pk), 'a small company id')
})

t.test('an item over 64 KiB, and items in chunks past the 65,536th, come back whole (the served columns widen)', async t => {
  // Two bytes an item hold a length or a chunk number up to 65,535: past it, a narrow column would wrap.
  const long = makeItem(1, '2024-01-02', [7], { translated_abstract: 'é'.repeat(40_000) })
  const builder = new SnapshotModelBuilder()
  builder.add('en', 0, long)
  builder.add('en', 1, makeItem(2, '2024-01-01', [7]))
  const model = builder.build(info)
  const items = JSON.parse(`[${model.language('en')!.page([7], 0, 10).items.toString()}]`)
  t.equal(items[0].translated_abstract, long.translated_abstract, 'the long item, 80,000 bytes of it')
  t.equal(items[1].pk, 2, 'the item after it')

  const chunky = new SnapshotModelBuilder()
  chunky.add('en', 0, makeItem(3, '2024-01-01', [7]))
  // A batch's chunk each, as parse threads hand them over: the next item lands in chunk 65,538.
  for (let i = 0; i < 65_537; i++) chunky.chunk(Buffer.from(','))
  chunky.add('en', 1, makeItem(4, '2024-01-02', [7]))
  t.same(served(chunky.build(info), [7]), [4, 3])
})
