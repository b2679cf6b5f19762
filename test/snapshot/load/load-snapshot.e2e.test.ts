// The one load pipeline on large generated snapshots (thousands of items, a parse pool of two threads): end
// to end for their size (ADR 044). load-snapshot.test.ts holds the rules on small files, and the pool's batches of
// a document that stops being followed.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SnapshotLoader, loadSnapshotFile } from '../../../src/snapshot/load/load-snapshot.js'
import { ParsePool } from '../../../src/snapshot/load/parse-pool.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { makeItem, poolForAnySize, problemsOf, tempDir, withoutPlace } from '../../helpers.js'

t.test('loading a large file gives the event loop turns (a reloading service keeps answering)', async t => {
  const { writeSnapshot: generate } = await import('../../../src/generate/write-snapshot.js')
  const file = join(await tempDir(t), 'large.json')
  await generate(file, { items: 12000, format: 'compact' })
  let turns = 0
  let loading = true
  const tick = () => { if (loading) { turns++; setImmediate(tick) } }
  setImmediate(tick)
  const model = await loadSnapshotFile(file)
  loading = false
  t.equal(model.itemCounts().en, 12000)
  t.ok(turns > 3, `${turns} turns of the event loop during the load`)
})

t.test('batches of any size, on the pool or on this thread: the same model, the same report', async t => {
  const { writeSnapshot: generate } = await import('../../../src/generate/write-snapshot.js')
  const dir = await tempDir(t)
  const file = join(dir, 'generated.json')
  await generate(file, { items: 3000, format: 'compact' })
  const raw = await readFile(file)
  const doc = JSON.parse(raw.toString()) as { languages: Record<string, SnapshotItem[]> }
  // Every page the model can give, with its companies' pages, as text.
  const everything = (model: SnapshotModel): string[] => model.languages.flatMap(code => {
    const listing = model.language(code)!
    const all = listing.page(null, 0, listing.size)
    const companies = [...new Set(doc.languages[code]!.flatMap(item => item.companies))]
    return [`${code} ${all.count} ${all.items.toString()}`, ...companies.map(c => `${code}/${c} ${listing.page([c], 0, 10_000).items.toString()}`)]
  })
  const reference = await loadSnapshotFile(file)
  t.ok(raw.length > 3 * 4096, 'the file is many batches long')
  // A pool of two threads, used from any size (the process's own starts at THREADS_FROM_BYTES).
  const pool = new ParsePool({ threads: 2 })
  t.teardown(() => pool.close())
  const loaders = [4096, 4099, 65536].flatMap(batchBytes => [
    { name: `batches of ${batchBytes} bytes on this thread`, loader: new SnapshotLoader({ batchBytes }) },
    { name: `batches of ${batchBytes} bytes on two threads`, loader: new SnapshotLoader({ batchBytes, pool: poolForAnySize(pool) }) }
  ])
  for (const { name, loader } of loaders) {
    const model = await loader.load(file)
    t.same(everything(model), everything(reference), name)
    t.equal(model.info.version, reference.info.version, 'the digest is of the same bytes')
  }

  const items = Array.from({ length: 40 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: 'é'.repeat(200) }))
  const badLate = structuredClone(items)
  badLate[35]!.backdate = '2024-02-30'
  const badLast = structuredClone(items)
  badLast[39]!.backdate = '2024-13-01'
  const repeated = structuredClone(items)
  repeated[30]!.pk = 3
  const cases: Array<[string, string | Buffer]> = [
    ['a late item', JSON.stringify({ languages: { en: badLate } })],
    ['a repeat', JSON.stringify({ languages: { en: repeated } })],
    ['cut short', JSON.stringify({ languages: { en: items } }).slice(0, -10)],
    ['not text', Buffer.concat([Buffer.from(`{"languages": {"en": [${JSON.stringify(items[0])}]}, "x": "`), Buffer.from([0xc3, 0xff]), Buffer.from('"}')])],
    ['garbled', `{"languages": {"en": [${JSON.stringify(items[0])}, {"pk": 2,,}]}}`],
    // Members' problems keep their place among the items' (items go to the parser in batches; members do not).
    ['members among items', JSON.stringify({ x: 1, generated_at: 'yesterday', languages: { en: badLate, es: badLast }, y: 2 }).replace('"y":2', '"y":[1,]')]
  ]
  for (const [name, text] of cases) {
    const reports = []
    for (const { loader } of loaders) reports.push(await problemsOf(text, 'bad.json', loader))
    for (const report of reports.slice(1)) t.same(report, reports[0], `${name}: the same report however it is batched`)
  }
  t.match(withoutPlace(await problemsOf(cases[5]![1], 'bad.json')), [/^generated_at: /, /^languages\.en\[35\]\.backdate: /, /^languages\.es\[39\]\.backdate: /, /^y: not valid JSON/])
})
