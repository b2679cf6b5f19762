// A model's item memory: shared memory, let go a turn after the model is retired, and gone once the
// collector has taken every view of it; never before, whatever answer still sends one.
import t from 'tap'
import { ItemMemory, type Collector } from '../../../src/snapshot/model/item-memory.js'
import { SnapshotLoader } from '../../../src/snapshot/load/load-snapshot.js'
import { ParsePool } from '../../../src/snapshot/load/parse-pool.js'
import { makeItem, poolForAnySize, writeSnapshot } from '../../helpers.js'

/** A collector that only records what it is given, and settles at once. */
function recordingCollector (): Collector & { given: ArrayBufferLike[][] } {
  const given: ArrayBufferLike[][] = []
  return { given, collect: async buffers => { given.push([...buffers]) } }
}

const turn = async () => await new Promise(resolve => setImmediate(resolve))

function sharedChunk (bytes: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(bytes))
}

t.test('a retired memory is let go after a turn of the event loop, each buffer once, and the model keeps none', async t => {
  const collector = recordingCollector()
  const chunk = sharedChunk(64)
  const list = [chunk.subarray(0, 32), chunk.subarray(32), sharedChunk(16)]
  const memory = new ItemMemory(list, collector)
  t.equal(memory.bytes, 64 + 16, 'each buffer counted once')
  memory.retire()
  memory.retire()
  t.equal(memory.status, 'retired', 'not in the tick that retired it')
  t.same(collector.given, [])
  memory.check()
  await memory.freed
  t.equal(memory.status, 'released')
  t.equal(memory.bytes, 0, 'none held once released')
  t.same(collector.given.map(buffers => buffers.length), [2], 'once, two chunks of one buffer counting once')
  t.equal(collector.given[0]?.[0], chunk.buffer)
  t.equal(list.length, 0, 'the model\'s list of chunks is emptied')
  t.throws(() => memory.check(), /read after its memory was released/)
})

t.test('a served memory is never let go', async t => {
  const collector = recordingCollector()
  const memory = new ItemMemory([sharedChunk(16)], collector)
  await turn()
  await turn()
  t.equal(memory.status, 'served')
  t.same(collector.given, [])
  memory.check()
})

t.test('every chunk of a model is shared memory, whether pool threads rendered it or this thread did', async t => {
  // 6 MB of items: several batches.
  const abstract = 'x'.repeat(6000)
  const en = Array.from({ length: 1000 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: abstract }))
  const file = await writeSnapshot(t, { languages: { en } })
  const pool = new ParsePool({ threads: 2 })
  t.teardown(() => pool.close())
  for (const [name, loader] of [['on this thread', new SnapshotLoader()], ['on the pool', new SnapshotLoader({ pool: poolForAnySize(pool) })]] as const) {
    const model = await loader.load(file)
    const views = model.language('en')!.page(null, 0, 1000).items.views()
    t.ok(views.length > 1, `${views.length} views`)
    t.ok(views.every(view => view.buffer instanceof SharedArrayBuffer), name)
  }
})
