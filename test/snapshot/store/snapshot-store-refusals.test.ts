// The store's refusals by reason: a file too big for the memory budget is a failed reload like
// a bad file, counted apart, its numbers kept for status and metrics; the real loader is given the guard.
import t from 'tap'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SnapshotError, TooBigError } from '../../../src/errors.js'
import { ProcessMemoryGuard } from '../../../src/snapshot/memory-budget.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { SnapshotLoader } from '../../../src/snapshot/load/load-snapshot.js'
import { SnapshotStore } from '../../../src/snapshot/store/snapshot-store.js'
import { makeItem, smallSnapshot, tempDir, serveFile } from '../../helpers.js'

const MiB = 1024 * 1024
const model = (label: string): SnapshotModel => new SnapshotModelBuilder().build({ source: 'x.json', version: label, generatedAt: label, loadedAt: new Date() })

t.test('refusals are counted by reason; the last one for memory keeps its numbers', async t => {
  const file = join(await tempDir(t), 'snapshot.json')
  await writeFile(file, '{}')
  const shortfall = { neededBytes: 1480 * MiB, freeBytes: 610 * MiB, budgetBytes: 1200 * MiB }
  const outcomes: Array<() => SnapshotModel> = [
    () => model('first'),
    () => { throw new TooBigError(file, 'needs ~1,480 MB at its peak; 610 MB of the 1,200 MB budget are free', shortfall) },
    () => { throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, ['snapshot.json:1: pk: is required']) },
    () => model('second')
  ]
  const store = new SnapshotStore(file, { load: async () => (outcomes.shift() as () => SnapshotModel)() })
  await store.start()
  t.same(store.record.refusals(), { invalid: 0, too_big: 0 })
  t.equal(store.record.lastTooBig(), null)
  t.equal(store.budget, null, 'no budget without a guard')

  t.equal(await serveFile(store), 'failed')
  t.equal(await serveFile(store), 'failed')
  t.same(store.record.refusals(), { invalid: 1, too_big: 1 })
  t.same(store.record.recentFailures().map(refusal => refusal.reason), ['invalid', 'too_big'], 'newest first')
  t.match(store.record.lastTooBig(), { file, ...shortfall })
  t.equal(store.status().failed, 2, 'both are failed reloads')
  t.equal(store.current()?.info.version, 'first', 'the served model stays')

  await writeFile(file, '{ }')
  t.equal(await serveFile(store), 'loaded', 'the file fixed')
  t.match(store.record.lastTooBig(), shortfall, 'kept after a success, as the refusals are')
})

t.test('the store\'s own loader holds every load to its guard, the first one too', async t => {
  const file = join(await tempDir(t), 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
  const budget = { bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const store = new SnapshotStore(file, { memory: new ProcessMemoryGuard(budget, { rss: () => 199 * MiB }) })
  t.equal(store.budget, budget)
  const error = await store.start().then(() => null, (error: unknown) => error)
  t.ok(error instanceof TooBigError, 'a first snapshot that cannot fit rejects the start: the service exits 1')
  t.match((error as Error).message, /^snapshot .*snapshot\.json does not fit in memory: needs ~\d+ MB at its peak; 1 MB of the 200 MB budget are free$/)
})

t.test('a change file is held to the store\'s budget too: one that would not fit is refused, the state stays', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
  let rss = 10 * MiB
  const budget = { bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const store = new SnapshotStore(file, { memory: new ProcessMemoryGuard(budget, { rss: () => rss }) })
  t.teardown(() => store.current()?.memory.retire())
  await store.start()
  const served = store.current()
  await mkdir(join(dir, 'changes'))
  const upsert = { op: 'upsert', language: 'en', ...makeItem(900, '2024-01-02', [1]) }
  await writeFile(join(dir, 'changes', '0001.jsonl'), `${JSON.stringify({ changes: 'explore', version: 1, id: 'c1' })}\n${JSON.stringify(upsert)}\n`)
  rss = 199.9 * MiB
  const chain = { snapshot: file, changes: [join(dir, 'changes', '0001.jsonl')] }
  t.equal(await store.serve(chain), 'failed')
  t.same(store.record.refusals(), { invalid: 0, too_big: 1 })
  t.match(store.record.recentFailures()[0], { file: join(dir, 'changes', '0001.jsonl'), reason: 'too_big' })
  t.equal(store.current(), served, 'the served state stays')
  t.same(store.record.changeFiles(), { applied: 0, refused: 1 })
  rss = 10 * MiB
  t.equal(await store.serve(chain), 'loaded', 'with room again, the same file is applied')
  t.same(store.record.changeFiles(), { applied: 1, refused: 1 })
})

t.test('a file refused for its contents and not written since is refused without another read or entry', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
  const loader = new SnapshotLoader({ log: { warn () {} }, memory: null })
  const read: string[] = []
  const store = new SnapshotStore(file, { load: async (path, options) => { read.push(path); return await loader.load(path, options) } })
  t.teardown(() => store.current()?.memory.retire())
  await store.start()
  const bad = join(dir, 'bad.json')
  const text = JSON.stringify({ generated_at: '2026-11-21T08:00:00Z', languages: { EN: [] } })
  await writeFile(bad, text)
  t.equal(await store.serve({ snapshot: bad, changes: [] }), 'failed')
  t.equal(await store.serve({ snapshot: bad, changes: [] }), 'failed', 'heard again, unchanged: still refused')
  t.same(read, [file, bad], 'not read again')
  t.equal(store.record.recentFailures().length, 1, 'one refusal listed')
  t.equal(store.status().failedInARow, 1)

  await writeFile(bad, `${text}\n`)
  t.equal(await store.serve({ snapshot: bad, changes: [] }), 'failed')
  t.same(read, [file, bad, bad], 'written again: read again')
  t.equal(store.record.recentFailures().length, 2, 'and refused again')
  t.equal(store.status().failedInARow, 2)

  // A success between: the same bad file heard again is a new failure, and the status says stale again.
  t.equal(await store.serve({ snapshot: file, changes: [] }), 'loaded')
  t.equal(await store.serve({ snapshot: bad, changes: [] }), 'failed')
  t.same(read, [file, bad, bad, file, bad], 'read again after a success')
  t.equal(store.status().failedInARow, 1)
  t.not(store.status().staleSince, null)
})

t.test('a file that could not be read is read again when heard of again, unchanged (a permission mended)', async t => {
  const file = join(await tempDir(t), 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
  let reads = 0
  const store = new SnapshotStore(file, {
    load: async () => {
      if (++reads === 2) throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, ['EMFILE: too many open files'])
      return model(`2026-01-0${reads}T00:00:00Z`)
    }
  })
  t.teardown(() => store.current()?.memory.retire())
  await store.start()
  t.equal(await serveFile(store), 'failed')
  t.equal(await serveFile(store), 'loaded', 'read again, and served')
  t.equal(reads, 3)
})
