// A model's item memory: lent to answers that send views of it, freed on the reaper thread once retired
// and given back, never before.
import t from 'tap'
import { ItemMemory, type Collector, type Reaper } from '../../src/snapshot/item-memory.js'
import { parseSnapshot } from '../../src/snapshot/load-snapshot.js'
import { memoryFreed, smallSnapshot } from '../helpers.js'

/** A reaper that only records what it is given. */
function recordingReaper (): Reaper & { taken: ArrayBuffer[][] } {
  const taken: ArrayBuffer[][] = []
  return { taken, take: async buffers => { taken.push(buffers) } }
}

const turn = async () => await new Promise(resolve => setImmediate(resolve))

t.test('a retired memory with nothing lent is freed after a turn of the event loop, each buffer once', async t => {
  const reaper = recordingReaper()
  const memory = new ItemMemory(reaper)
  const shared = Buffer.allocUnsafeSlow(64)
  memory.hold([shared.subarray(0, 32), shared.subarray(32), Buffer.allocUnsafeSlow(16)])
  t.equal(memory.bytes, 64 + 16, 'each buffer counted once')
  memory.retire()
  t.equal(memory.status, 'retired', 'not in the tick that retired it')
  t.same(reaper.taken, [])
  await memory.freed
  t.equal(memory.status, 'freed')
  t.equal(memory.bytes, 0, 'none held once freed')
  t.equal(reaper.taken.length, 1)
  t.equal(reaper.taken[0]?.length, 2, 'two chunks of one ArrayBuffer count once')
  t.throws(() => memory.check(), /read after its memory was freed/)
  t.throws(() => memory.lend(), /read after its memory was freed/)
})

t.test('lent memory is freed only when the last borrower gives it back; giving back twice counts once', async t => {
  const reaper = recordingReaper()
  const memory = new ItemMemory(reaper)
  memory.hold([Buffer.allocUnsafeSlow(16)])
  const first = memory.lend()
  const second = memory.lend()
  memory.retire()
  memory.retire()
  await turn()
  first()
  first()
  t.equal(memory.borrowed, 1)
  await turn()
  t.equal(memory.status, 'retired', 'still lent to the second')
  t.same(reaper.taken, [])
  second()
  await memory.freed
  t.equal(memory.status, 'freed')
  t.equal(reaper.taken.length, 1)
})

t.test('a served memory is never freed, however often it is lent and given back', async t => {
  const reaper = recordingReaper()
  const memory = new ItemMemory(reaper)
  memory.hold([Buffer.allocUnsafeSlow(16)])
  memory.lend()()
  await turn()
  t.equal(memory.status, 'served')
  t.same(reaper.taken, [])
  memory.check()
})

t.test('a retired model cannot be read once freed: no page of detached memory goes out empty', async t => {
  const model = parseSnapshot(Buffer.from(JSON.stringify(smallSnapshot())), 'x.json')
  const page = model.language('en')!.page(null, 0, 5)
  t.equal(JSON.parse(`[${page.items.toString()}]`).length, 5)
  model.memory.retire()
  await memoryFreed(model.memory)
  t.throws(() => page.items.toString(), /read after its memory was freed/)
  t.throws(() => model.language('en')!.page(null, 0, 5).items.views(), /read after its memory was freed/)
})

/** A collector that only records what it is given. */
function recordingCollector (): Collector & { given: SharedArrayBuffer[][] } {
  const given: SharedArrayBuffer[][] = []
  return { given, collect: async buffers => { given.push([...buffers]) } }
}

t.test('a retired memory\'s shared chunks go to the collector, the others to the reaper; the model keeps neither', async t => {
  const reaper = recordingReaper()
  const collector = recordingCollector()
  const memory = new ItemMemory(reaper, collector)
  const sharedChunk = Buffer.from(new SharedArrayBuffer(32))
  const list = [sharedChunk.subarray(0, 16), sharedChunk.subarray(16), Buffer.allocUnsafeSlow(16)]
  memory.hold(list)
  memory.retire()
  await memory.freed
  t.equal(reaper.taken[0]?.length, 1, 'the ArrayBuffer moved to the reaper')
  t.same(collector.given.map(buffers => buffers.length), [1], 'the SharedArrayBuffer, once, waited for')
  t.equal(collector.given[0]?.[0], sharedChunk.buffer)
  t.equal(list.length, 0, 'the model\'s list of chunks is emptied')
})

t.test('a model rendered on parse threads is in shared memory, and its memory settles freed once collected', async t => {
  // Rendered as a parse thread does (parse-batch.ts), here on this thread: the chunks are shared.
  const model = parseSnapshot(Buffer.from(JSON.stringify(smallSnapshot())), 'x.json')
  // Looked at in a function of its own, so that no view of it stays in this one's frame.
  const held = ((): WeakRef<ArrayBufferLike> => {
    const chunk = model.language('en')!.page(null, 0, 1).items.views()[0] as Buffer
    t.ok(chunk.buffer instanceof SharedArrayBuffer)
    return new WeakRef(chunk.buffer)
  })()
  model.memory.retire()
  // Settles only once a FinalizationRegistry saw every chunk collected, on the collections it asked for.
  await memoryFreed(model.memory)
  t.equal(held.deref(), undefined, 'the shared memory was collected')
})

t.test('the reaper thread takes the chunks away from this thread and frees them', async t => {
  // 32 MiB, glibc's largest dynamic mmap threshold: a chunk this size is always a mapping of its own, so
  // its free shows in RSS. Smaller ones come from the allocator's heap once a larger block has been freed
  // in this process, and their free then shows in RSS only sometimes (seen with 4 MiB chunks under tap's
  // coverage: 11 MiB of 256 MiB, in one run of three); the reaper frees them all the same.
  // The reaper running first: a thread starting (its isolate, the loader tests run under) takes more than
  // the chunks give back.
  const warm = new ItemMemory()
  warm.hold([Buffer.allocUnsafeSlow(16)])
  warm.retire()
  await warm.freed
  const chunkBytes = 32 * 1024 * 1024
  const chunks = Array.from({ length: 8 }, (_, i) => Buffer.allocUnsafeSlow(chunkBytes).fill(i + 1))
  const memory = new ItemMemory()
  memory.hold([...chunks])
  const before = process.memoryUsage.rss()
  memory.retire()
  await memory.freed
  t.ok(chunks.every(chunk => chunk.byteLength === 0), 'every chunk moved to the reaper (detached here)')
  // 256 MiB were touched; the allocator gives such chunks back to the system when they are freed.
  const dropped = before - process.memoryUsage.rss()
  t.ok(dropped > 192 * 1024 * 1024, `RSS fell by ${Math.round(dropped / 1024 / 1024)} MiB once the reaper reported them freed`)
})
