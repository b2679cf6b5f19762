// SnapshotStore (src/snapshot/store/snapshot-store.ts): a reload swaps the model or keeps it and says why, one at a time;
// a file written while read is read again; refusals counted by reason, and remembered by the one rule of ADR 045.
import t from 'tap'
import { EventEmitter, once } from 'node:events'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { ManifestError, SnapshotError, TooBigError } from '../../../src/errors.js'
import { SnapshotLoader } from '../../../src/snapshot/load/load-snapshot.js'
import { ProcessMemoryGuard } from '../../../src/snapshot/memory-budget.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { causeOf, RefusalMemory, remembered } from '../../../src/snapshot/store/refusal-memory.js'
import { SnapshotStore, type StoreOptions } from '../../../src/snapshot/store/snapshot-store.js'
import { makeItem, memoryFreed, serveFile, smallSnapshot, tempDir, writeSnapshot } from '../../helpers.js'

/** A model with nothing in it but its label: what the store swaps, not what it serves. */
const model = (label: string): SnapshotModel => new SnapshotModelBuilder().build({ source: 'x.json', version: label, generatedAt: label, loadedAt: new Date() })

// src/snapshot/store/snapshot-store.ts: reloads swapped in or refused, counted, one at a time; a file written while it is read.
/** A store whose first load gave `initial`; `options.load` does every later one. */
async function startedStore (file: string, initial: SnapshotModel, options: StoreOptions = {}): Promise<SnapshotStore> {
  let first = true
  const store = new SnapshotStore(file, {
    ...options,
    load: async path => {
      if (!first) return await (options.load as (file: string) => Promise<SnapshotModel>)(path)
      first = false
      return initial
    }
  })
  await store.start()
  return store
}

/** A loader whose loads finish when the test says so. */
function controlledLoader () {
  const pending: Array<{ resolve: (m: SnapshotModel) => void, reject: (e: Error) => void }> = []
  let calls = 0
  const started = new EventEmitter()
  const load = () => new Promise<SnapshotModel>((resolve, reject) => {
    calls++
    pending.push({ resolve, reject })
    started.emit('load')
  })
  /** Resolves once the store has called the loader (it stats the file first). */
  const nextLoad = () => once(started, 'load')
  return { load, pending, calls: () => calls, nextLoad }
}

t.test('a reload swaps the model and counts the success', async t => {
  const store = await startedStore('x.json', model('2026-01-01T00:00:00Z'), { load: async () => model('2026-01-02T00:00:00Z') })
  t.equal(await serveFile(store), 'loaded')
  t.equal(store.current()!.info.generatedAt, '2026-01-02T00:00:00Z')
  t.same(store.status(), { succeeded: 1, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null })
})

t.test('only a load beside a served model is told it is serving (a reload leaves a core to the requests)', async t => {
  const serving: boolean[] = []
  const store = new SnapshotStore('x.json', {
    load: async (_path, options) => {
      serving.push(options.serving)
      return model(`2026-01-0${serving.length}T00:00:00Z`)
    }
  })
  await store.start()
  t.equal(await serveFile(store), 'loaded')
  t.same(serving, [false, true])
})

t.test('a failed reload keeps the model and records the report', async t => {
  const first = model('2026-01-01T00:00:00Z')
  const errors: string[] = []
  const store = await startedStore('x.json', first, {
    load: async () => { throw new SnapshotError('SNAPSHOT_ERR_INVALID', 'x.json', ['languages: is required']) },
    log: { info () {}, warn () {}, error: (_fields, message) => { errors.push(message) } }
  })
  t.equal(await serveFile(store), 'failed')
  t.equal(await serveFile(store), 'failed')
  t.equal(store.current(), first)
  const status = store.status()
  t.same([status.succeeded, status.failed, status.failedInARow], [0, 2, 2])
  t.same(status.lastFailure?.problems, ['languages: is required'])
  t.match(errors[0], /snapshot reload failed; still serving the last good snapshot\nsnapshot x.json is invalid/)
})

t.test('a success resets the failures in a row but not the totals', async t => {
  let fail = true
  const store = await startedStore('x.json', model('2026-01-01T00:00:00Z'), {
    load: async () => { if (fail) throw new Error('disk on fire'); return model('2026-01-02T00:00:00Z') }
  })
  await serveFile(store)
  fail = false
  await serveFile(store)
  t.match(store.status(), { succeeded: 1, failed: 1, failedInARow: 0, lastFailure: { problems: ['unexpected error while loading the snapshot (see the service\'s log)'] } }, 'an unexpected error\'s own message is for the log, not for /-/status')
})

t.test('a missing file is not a failure: editors delete before they recreate', async t => {
  const first = model('2026-01-01T00:00:00Z')
  const store = await startedStore('x.json', first, {
    load: async () => { throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', 'x.json', ['the file does not exist']) }
  })
  t.equal(await serveFile(store), 'missing')
  t.equal(store.current(), first)
  t.same(store.status(), { succeeded: 0, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null })
})

t.test('serves never overlap: one asked for during a load runs after it', async t => {
  const loader = controlledLoader()
  const store = await startedStore('x.json', model('2026-01-01T00:00:00Z'), { load: loader.load })
  const firstLoad = loader.nextLoad()
  const first = serveFile(store)
  await firstLoad
  const second = serveFile(store)
  t.equal(loader.calls(), 1, 'no second load while the first runs')
  const secondLoad = loader.nextLoad()
  loader.pending.shift()!.resolve(model('2026-01-02T00:00:00Z'))
  t.equal(await first, 'loaded')
  await secondLoad
  t.equal(loader.calls(), 2)
  loader.pending.shift()!.resolve(model('2026-01-03T00:00:00Z'))
  t.equal(await second, 'loaded')
  t.equal(store.current()!.info.generatedAt, '2026-01-03T00:00:00Z')
})

t.test('a file changed while it was read is loaded again, not counted as a failure', async t => {
  // An editor saving in place truncates, then writes: a load can read the empty file in between.
  const file = join(await tempDir(t), 'snapshot.json')
  await writeFile(file, '')
  let calls = 0
  const warnings: string[] = []
  const store = await startedStore(file, model('2026-01-01T00:00:00Z'), {
    settleMs: 1,
    log: { info () {}, warn: (_fields, message) => { warnings.push(message) }, error () {} },
    load: async path => {
      calls++
      if (calls === 1) {
        await writeFile(path, 'the rest of the save')
        throw new SnapshotError('SNAPSHOT_ERR_INVALID', path, ['the file is empty'])
      }
      return model('2026-01-02T00:00:00Z')
    }
  })
  const outcomes: string[] = []
  store.on('reloaded', outcome => outcomes.push(outcome))
  t.equal(await serveFile(store), 'loaded')
  t.same(outcomes, ['superseded', 'loaded'])
  t.same(store.status(), { succeeded: 1, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null })
  t.match(warnings, ['snapshot file changed while it was read; loading it again'])
})

t.test('a file changed while a load read it is not swapped in, even when what was read is valid', async t => {
  // A JSON Lines file cut at a line's end is valid: the first lines of a save in progress must not be served.
  const file = join(await tempDir(t), 'snapshot.jsonl')
  await writeFile(file, 'the first lines')
  let calls = 0
  const store = await startedStore(file, model('2026-01-01T00:00:00Z'), {
    load: async path => {
      calls++
      if (calls === 1) {
        await writeFile(path, 'the first lines and the rest')
        return model('2026-01-01T12:00:00Z')
      }
      return model('2026-01-02T00:00:00Z')
    }
  })
  const swapped: Array<string | null> = []
  store.on('reloaded', () => swapped.push(store.current()!.info.generatedAt))
  t.equal(await serveFile(store), 'loaded')
  t.same(swapped, ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'], 'the half-read file was never served')
  t.equal(calls, 2)
})

t.test('the first load, too, reads again a file written to while it was read', async t => {
  const file = join(await tempDir(t), 'snapshot.jsonl')
  await writeFile(file, 'the first lines')
  let calls = 0
  const halfRead = model('2026-01-01T12:00:00Z')
  const store = new SnapshotStore(file, {
    load: async path => {
      calls++
      if (calls === 1) {
        await writeFile(path, 'the first lines and the rest')
        return halfRead
      }
      return model('2026-01-02T00:00:00Z')
    }
  })
  t.equal((await store.start()).info.generatedAt, '2026-01-02T00:00:00Z', 'the half-read file was never served')
  t.equal(calls, 2)
  // Its memory goes as a replaced model's does (shared memory is freed only when asked for).
  await memoryFreed(halfRead.memory)
  t.equal(halfRead.memory.status, 'released', 'the model read from the half-written file is let go')
})

t.test('a file that stays bad after the settle time is a failure', async t => {
  const file = join(await tempDir(t), 'snapshot.json')
  await writeFile(file, '{')
  const store = await startedStore(file, model('2026-01-01T00:00:00Z'), {
    settleMs: 1,
    load: async path => { throw new SnapshotError('SNAPSHOT_ERR_INVALID', path, ['1:2: unexpected end of the file']) }
  })
  t.equal(await serveFile(store), 'failed')
  t.equal(store.status().failed, 1)
})

// src/snapshot/store/snapshot-store.ts: its refusals by reason, a file too big for the memory budget counted apart; the real loader's guard.
const MiB = 1024 * 1024

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
  const file = await writeSnapshot(t, smallSnapshot())
  const budget = { bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const store = new SnapshotStore(file, { memory: new ProcessMemoryGuard(budget, { rss: () => 199 * MiB }) })
  t.equal(store.budget, budget)
  const error = await store.start().then(() => null, (error: unknown) => error)
  t.ok(error instanceof TooBigError, 'a first snapshot that cannot fit rejects the start: the service exits 1')
  t.match((error as Error).message, /^snapshot .*snapshot\.json does not fit in memory: needs ~\d+ MB at its peak; 1 MB of the 200 MB budget are free$/)
})

t.test('a change file is held to the store\'s budget too: one that would not fit is refused, the state stays', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const dir = dirname(file)
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
  const file = await writeSnapshot(t, smallSnapshot())
  const dir = dirname(file)
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
  const file = await writeSnapshot(t, smallSnapshot())
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

// src/snapshot/store/refusal-memory.ts: the one refusal rule (ADR 045): what is remembered, where, by which key, and until when.
const memoryShortfall = { neededBytes: 2, freeBytes: 1, budgetBytes: 3 }

t.test('each refusal\'s cause: the content, the memory budget, or anything else', async t => {
  t.equal(causeOf(new SnapshotError('SNAPSHOT_ERR_INVALID', 'a.json', ['bad'])), 'content')
  t.equal(causeOf(new ManifestError(['bad'])), 'content')
  t.equal(causeOf(new TooBigError('a.json', 'too big', memoryShortfall)), 'memory')
  t.equal(causeOf(new SnapshotError('SNAPSHOT_ERR_UNREADABLE', 'a.json', ['the file does not exist'])), 'other')
  t.equal(causeOf(new Error('a fault of ours')), 'other')
})

t.test('remembered: the content everywhere, the memory budget for an object only, nothing else', async t => {
  t.same(['content', 'memory', 'other'].map(cause => [remembered(cause as never, 'file'), remembered(cause as never, 'object')]),
    [[true, true], [false, true], [false, false]])
})

t.test('the last refusal is recalled by its key alone, until another is refused or a state is served', async t => {
  const memory = new RefusalMemory<string>('object')
  memory.remember('etag-1', 'memory', 'first')
  t.equal(memory.recall('etag-1'), 'first')
  t.equal(memory.recall('etag-2'), null, 'another key: not recalled')
  t.equal(memory.latest, 'first')
  memory.remember('etag-2', 'other', 'second')
  t.equal(memory.recall('etag-1'), null, 'a refusal not remembered forgets the one before')
  t.equal(memory.latest, null)
  memory.remember(null, 'content', 'third')
  t.equal(memory.latest, null, 'nothing names the bytes: nothing remembered')
  memory.remember('etag-3', 'content', 'third')
  memory.forget()
  t.equal(memory.recall('etag-3'), null, 'a state served: forgotten')
  const files = new RefusalMemory<string>('file')
  files.remember('a.json\n1:2:3:4', 'memory', 'too big')
  t.equal(files.latest, null, 'a file too big is weighed again at its next read')
})
