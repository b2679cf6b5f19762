// A version's parts make the model they were taken from again: the same pages, loaded and derived versions alike.
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readChangeFile } from '../../../src/snapshot/changes/read-change-file.js'
import { deriveVersion } from '../../../src/snapshot/model/derive-version.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { modelOf, partsOf, swapArrays } from '../../../src/snapshot/model/version-parts.js'
import { makeItem, modelOf as load, tempDir } from '../../helpers.js'

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
