// A version handed to a serving thread serves, byte for byte, what the control's model serves: loaded and
// derived versions alike, sent through a real MessagePort (which shares SharedArrayBuffers and copies the rest).
import t from 'tap'
import { deepStrictEqual } from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MessageChannel } from 'node:worker_threads'
import fc from 'fast-check'
import { readChangeFile } from '../../src/snapshot/changes/read-change-file.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { deriveVersion } from '../../src/snapshot/model/derive-version.js'
import { SHARED_FROM } from '../../src/snapshot/model/shared-arrays.js'
import type { SnapshotModel } from '../../src/snapshot/model/snapshot-model.js'
import { VersionAdopter, VersionDescriber, type ArrayRef, type VersionMessage } from '../../src/serving/version-handoff.js'
import { makeItem } from '../helpers.js'
import { runs } from '../property-runs.js'

const COMPANIES = [1, 2, 3, 4, 5]
const describer = new VersionDescriber()
const describe = (model: SnapshotModel): VersionMessage => describer.describe(model)
const dir = await mkdtemp(join(tmpdir(), 'explore-handoff-'))
t.teardown(async () => await rm(dir, { recursive: true, force: true }))
let files = 0

async function load (languages: Record<string, unknown[]>): Promise<SnapshotModel> {
  const file = join(dir, `snapshot-${files++}.json`)
  await writeFile(file, JSON.stringify({ languages }))
  return await loadSnapshotFile(file)
}

async function derive (model: SnapshotModel, lines: unknown[]): Promise<SnapshotModel> {
  const file = join(dir, `changes-${files++}.jsonl`)
  await writeFile(file, [{ changes: 'explore', version: 1, id: `c${files}` }, ...lines].map(line => `${JSON.stringify(line)}\n`).join(''))
  return await deriveVersion(model, await readChangeFile(file))
}

/** The message as a thread receives it: through a real port. */
async function sent (message: VersionMessage): Promise<VersionMessage> {
  const { port1, port2 } = new MessageChannel()
  const received = once(port2, 'message')
  port1.postMessage(message)
  const [data] = await received as [VersionMessage]
  port1.close()
  return data
}

function pagesOf (model: SnapshotModel): string[] {
  const filters = [null, ...COMPANIES.map(c => [c]), [1, 2], [2, 4, 5], [9]]
  return model.languages.flatMap(code => filters.flatMap(companies => [[0, 1000], [0, 3], [2, 5]].map(([offset, limit]) => {
    const page = model.language(code)!.page(companies, offset!, limit!)
    return `${code} ${String(companies)} ${offset}+${limit}: ${page.count} [${page.items.toString()}]`
  })))
}

const item = fc.record({
  pk: fc.integer({ min: 1, max: 40 }),
  day: fc.integer({ min: 1, max: 4 }),
  companies: fc.array(fc.constantFrom(...COMPANIES), { maxLength: 3 })
}).map(({ pk, day, companies }) => makeItem(pk, `2024-01-0${day}`, companies))
const op = fc.oneof(
  fc.tuple(fc.constantFrom('en', 'es'), item).map(([language, it]) => ({ op: 'upsert', language, ...it })),
  fc.tuple(fc.constantFrom('en', 'es'), fc.integer({ min: 1, max: 40 })).map(([language, pk]) => ({ op: 'delete', language, pk }))
)

t.test('a loaded version and every version a chain of change files derives serve the same pages on the thread that adopts them', async t => {
  await fc.assert(fc.asyncProperty(fc.uniqueArray(item, { selector: i => i.pk, maxLength: 30 }), fc.array(fc.array(op, { maxLength: 10 }), { minLength: 1, maxLength: 4 }), async (items, chain) => {
    const adopter = new VersionAdopter()
    let served = await load({ en: items })
    deepStrictEqual(pagesOf(adopter.adopt(await sent(describe(served)))), pagesOf(served))
    for (const lines of chain) {
      served = await derive(served, lines)
      const adopted = adopter.adopt(await sent(describe(served)))
      deepStrictEqual(pagesOf(adopted), pagesOf(served))
      deepStrictEqual(adopted.info.contentVersion, served.info.contentVersion)
    }
  }), { numRuns: runs(40) })
  t.pass('40 random chains')
})

t.test('every array of a version that grows with the snapshot is shared, not copied; a thread reuses the buffers it holds', async t => {
  const days = (pk: number) => `2024-0${1 + (pk % 9)}-${String(1 + (pk % 28)).padStart(2, '0')}`
  const model = await load({ en: Array.from({ length: 5000 }, (_, i) => makeItem(i + 1, days(i * 7), [i % 50, 100 + (i % 3)])) })
  const derived = await derive(model, Array.from({ length: 300 }, (_, i) => ({ op: 'upsert', language: 'en', ...makeItem(20_000 + i, days(i * 11), [i % 50]) })))
  for (const version of [model, derived]) {
    const copied: number[] = []
    const visit = (value: unknown): void => {
      if (ArrayBuffer.isView(value)) copied.push(value.byteLength)
      else if (Array.isArray(value)) value.forEach(visit)
      else if (value !== null && typeof value === 'object' && !(value instanceof SharedArrayBuffer)) Object.values(value).forEach(visit)
    }
    const message = describe(version)
    visit(message.parts.listings)
    visit(message.parts.chunks)
    t.ok(copied.every(bytes => bytes < SHARED_FROM), `arrays copied: ${copied.length}, the largest ${Math.max(0, ...copied)} bytes`)
    t.ok(message.parts.chunks.every((chunk: ArrayRef) => !ArrayBuffer.isView(chunk)), 'every chunk of items is shared')
  }
  const adopter = new VersionAdopter()
  const first = adopter.adopt(await sent(describe(model)))
  const second = adopter.adopt(await sent(describe(derived)))
  const buffers = (version: SnapshotModel) => new Set(version.memory.list.map(chunk => chunk.buffer))
  const common = [...buffers(first)].filter(buffer => buffers(second).has(buffer))
  t.equal(common.length, buffers(first).size, 'the derived version reads the very buffer objects of the loaded one')
  // Retiring the first lets go of nothing the second reads: the second still serves every page.
  first.memory.retire()
  await new Promise(resolve => setImmediate(resolve))
  t.same(pagesOf(second), pagesOf(derived))
})
