// What only the garbage collector can show: a retired model's memory goes once nothing holds a view of it,
// and not before; a replaced model is not kept by the store. Run with --expose-gc (package.json, tap's
// node-arg): each waits a bounded number of full collections and fails saying what leaked, never by timing out.
import t from 'tap'
import { SnapshotStore } from '../../src/snapshot/store/snapshot-store.js'
import { SnapshotModelBuilder } from '../../src/snapshot/model/build-model.js'
import type { SnapshotModel } from '../../src/snapshot/model/snapshot-model.js'
import { collectAndFinalize, collectGarbage, memoryFreed, modelOf, smallSnapshot, serveFile } from '../helpers.js'
import { setMemoryPolicy } from '../../src/snapshot/memory-policy.js'

// The collector as shipped, its hint on: the other tests turn it off (helpers.ts).
setMemoryPolicy({ collectionHint: true })

const turn = async () => await new Promise(resolve => setImmediate(resolve))

/** A model with nothing in it but its label: what the store swaps, not what it serves. */
const model = (label: string): SnapshotModel => new SnapshotModelBuilder().build({ source: 'x.json', version: label, generatedAt: label, loadedAt: new Date() })

t.test('a retired model cannot be read once released', async t => {
  const model = await modelOf(smallSnapshot())
  const page = model.language('en')!.page(null, 0, 5)
  t.equal(JSON.parse(`[${page.items.toString()}]`).length, 5)
  model.memory.retire()
  await memoryFreed(model.memory)
  t.throws(() => page.items.toString(), /read after its memory was released/)
  t.throws(() => model.language('en')!.page(null, 0, 5).items.views(), /read after its memory was released/)
})

t.test('a retired model settles freed once the collector has taken its memory, and not while a view is held', async t => {
  const model = await modelOf(smallSnapshot())
  // A view an answer still has queued on a slow socket.
  let view: Buffer | null = model.language('en')!.page(null, 0, 1).items.views()[0] as Buffer
  const text = view.toString()
  const held = new WeakRef(view.buffer)
  let settled = false
  model.memory.freed.then(() => { settled = true }, () => {})
  model.memory.retire()
  await turn()
  t.equal(model.memory.status, 'released', 'the model can no longer be read')
  await collectAndFinalize()
  t.equal(settled, false, 'not settled while a view is held, through a collection and its finalizers')
  t.equal(view.toString(), text, 'and the view still reads the item')
  view = null
  // Settles only once a FinalizationRegistry saw every chunk collected, on the collections it asked for.
  await memoryFreed(model.memory)
  t.equal(held.deref(), undefined, 'the shared memory was collected')
})

t.test('a replaced first model is left to the collector: the store keeps no reference to it', async t => {
  let loads = 0
  const store = new SnapshotStore('x.json', { load: async () => model(`2026-01-0${++loads}T00:00:00Z`) })
  const firstRef = new WeakRef(await store.start())
  t.equal((await store.start()).info.generatedAt, '2026-01-01T00:00:00Z', 'start() resolves with the model served then')
  t.equal(await serveFile(store), 'loaded')
  // The old model's memory is freed a turn after the swap; then nothing should hold it.
  await new Promise(resolve => setImmediate(resolve))
  await new Promise(resolve => setImmediate(resolve))
  collectGarbage()
  t.equal(firstRef.deref(), undefined, 'the first model was collected')
  t.equal(store.current()?.info.generatedAt, '2026-01-02T00:00:00Z')
})
