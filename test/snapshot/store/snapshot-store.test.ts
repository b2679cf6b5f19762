import t from 'tap'
import { EventEmitter, once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SnapshotError } from '../../../src/errors.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { SnapshotStore, type StoreOptions } from '../../../src/snapshot/store/snapshot-store.js'
import { memoryFreed, tempDir, serveFile } from '../../helpers.js'

/** A model with nothing in it but its label: what the store swaps, not what it serves. */
const model = (label: string): SnapshotModel => new SnapshotModelBuilder().build({ source: 'x.json', version: label, generatedAt: label, loadedAt: new Date() })

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
