// One pk lookup for every version of a flat listing (change-index.ts): a pk's slots newest first, the first one the
// version's whole list holds. Versions branched from one root share the columns and the index, never a pk's answer.
import t from 'tap'
import { deepStrictEqual } from 'node:assert/strict'
import fc from 'fast-check'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { applyChangesToSnapshot, type ChangeLine, type SnapshotDocument } from '../../../src/snapshot/changes/merge-snapshot.js'
import { readChangeFile } from '../../../src/snapshot/changes/read-change-file.js'
import { deriveVersion } from '../../../src/snapshot/model/derive-version.js'
import { Overlay } from '../../../src/snapshot/model/overlay.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { makeItem, modelOf } from '../../helpers.js'
import { runs } from '../../property-runs.js'

const item = fc.record({
  pk: fc.integer({ min: 1, max: 12 }),
  day: fc.integer({ min: 1, max: 3 }),
  companies: fc.array(fc.constantFrom(1, 2, 3), { maxLength: 2 })
}).map(({ pk, day, companies }): SnapshotItem => makeItem(pk, `2024-01-0${day}`, companies, { translated_title: `${day} ${pk}` }))

const op: fc.Arbitrary<ChangeLine> = fc.oneof(
  { weight: 3, arbitrary: item.map((it): ChangeLine => ({ op: 'upsert', language: 'en', ...it })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 13 }).map((pk): ChangeLine => ({ op: 'delete', language: 'en', pk })) }
)
const chain = fc.array(fc.array(op, { maxLength: 8 }), { minLength: 1, maxLength: 3 })

const dir = await mkdtemp(join(tmpdir(), 'explore-change-index-'))
t.teardown(async () => await rm(dir, { recursive: true, force: true }))
let files = 0

const load = async (doc: SnapshotDocument): Promise<SnapshotModel> => await modelOf(doc)

async function derive (model: SnapshotModel, lines: readonly ChangeLine[], id: string): Promise<SnapshotModel> {
  const file = join(dir, `changes-${files++}.jsonl`)
  await writeFile(file, [{ changes: 'explore', version: 1, id }, ...lines].map(line => `${JSON.stringify(line)}\n`).join(''))
  return await deriveVersion(model, await readChangeFile(file))
}

function pagesOf (model: SnapshotModel): string[] {
  const listing = model.language('en')
  if (listing === undefined) return []
  return [null, [1], [2], [3], [1, 3]].map(companies => {
    const page = listing.page(companies, 0, 100)
    return `${String(companies)}: ${page.count} [${page.items.toString()}]`
  })
}

/** Deletes of pks not there when their line comes: what a version's pk lookup must say. */
function absentDeletes (doc: SnapshotDocument, lines: readonly ChangeLine[]): number {
  const present = new Set((doc.languages.en ?? []).map(each => each.pk))
  let absent = 0
  for (const line of lines) {
    if (line.op === 'upsert') present.add(line.pk)
    else if (!present.delete(line.pk)) absent++
  }
  return absent
}

t.test('two chains from one root, their files taken in turn, each serve what a full load of theirs serves', async t => {
  await fc.assert(fc.asyncProperty(fc.uniqueArray(item, { selector: each => each.pk, maxLength: 10 }), chain, chain, async (items, a, b) => {
    const doc: SnapshotDocument = { languages: { en: items } }
    const root = await load(doc)
    const branches = [{ files: a, served: root, applied: [] as ChangeLine[][] }, { files: b, served: root, applied: [] as ChangeLine[][] }]
    const versions: SnapshotModel[] = [root]
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      for (const [n, branch] of branches.entries()) {
        const lines = branch.files[i]
        if (lines === undefined) continue
        const before = applyChangesToSnapshot(doc, branch.applied)
        branch.served = await derive(branch.served, lines, `b${n}-${i}`)
        branch.applied.push(lines)
        versions.push(branch.served)
        const reference = await load(applyChangesToSnapshot(doc, branch.applied))
        deepStrictEqual(pagesOf(branch.served), pagesOf(reference), `branch ${n}, file ${i}`)
        deepStrictEqual(branch.served.info.changes?.at(-1)?.absentDeletes, absentDeletes(before, lines), `branch ${n}, file ${i}: absent deletes`)
        reference.memory.retire()
      }
    }
    for (const version of versions) version.memory.retire()
  }), { numRuns: runs(60) })
  t.pass('60 random pairs of chains')
})

t.test('a list holds its kept ranks and its added slots, and nothing else; a company\'s stretch reads as its ranks', async t => {
  // Ranks 0..9 in served order, added slots 100 and 101 between ranks 2 and 3, and 7 and 8.
  const rankOf = (slot: number): number => slot === 100 ? 2.5 : slot === 101 ? 7.5 : slot
  const before = (x: number, y: number): boolean => rankOf(x) < rankOf(y)
  const array = Uint32Array.from([9, 9, 1, 2, 3, 7, 8, 9, 9])
  const company = Overlay.within(array, 2, 7)
  t.same([...company.slots(0, 9)], [1, 2, 3, 7, 8])
  t.same([...company.ranks()], [1, 2, 3, 7, 8])
  t.notOk(company.edited)
  const edited = company.edit([2, 8], new Set(), [100, 101], [3, 8], before)
  t.same([...edited.slots(0, 9)], [1, 100, 3, 7, 101])
  t.same([0, 1, 2, 3, 7, 8, 9, 100, 101, 102].filter(slot => edited.holds(slot, before)), [1, 3, 7, 100, 101])
  const whole = new Overlay(null, 10).edit([4], new Set(), [101], [8], before)
  t.same([0, 3, 4, 5, 9, 10, 100, 101].filter(slot => whole.holds(slot, before)), [0, 3, 5, 9, 101])
})
