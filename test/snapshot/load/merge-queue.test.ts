// The order the pipeline merges parsed batches in (merge-batches.ts, MergeQueue): the order they were sent,
// whichever finishes first, with the loading thread's own steps in their place among them.
import t from 'tap'
import { MergeQueue } from '../../../src/snapshot/load/merge-batches.js'
import { BatchMemory } from '../../../src/snapshot/load/batch-memory.js'
import type { ParsedBatch } from '../../../src/snapshot/load/parse-batch.js'

/** A parsed batch that is nothing but its number (as `count`) and the read memory it gives back. */
function parsed (number: number, read: Uint8Array = Buffer.alloc(1)): ParsedBatch {
  return { count: number, read } as unknown as ParsedBatch
}

/** A batch promise resolved when the test says so, as a parse thread's reply would be. */
function later (): { promise: Promise<ParsedBatch>, resolve: (batch: ParsedBatch) => void } {
  let settle!: (batch: ParsedBatch) => void
  const promise = new Promise<ParsedBatch>(resolve => { settle = resolve })
  return { promise, resolve: settle }
}

t.test('batches merge in the order they were sent, effects in their place, whatever order the threads answer in', async t => {
  const queue = new MergeQueue(() => {})
  const seen: string[] = []
  const merge = (batch: ParsedBatch): boolean => { seen.push(`batch ${batch.count}`); return true }
  queue.step(() => seen.push('effect before any batch') > 0)
  t.same(seen, ['effect before any batch'], 'an effect with nothing queued runs at once')
  const first = later()
  const second = later()
  queue.batch(first.promise, merge)
  queue.step(() => seen.push('effect after batch 1') > 0)
  queue.batch(second.promise, merge)
  t.equal(queue.length, 3)
  second.resolve(parsed(2))
  first.resolve(parsed(1))
  t.equal(await queue.mergeUntil(1), true)
  t.same(seen, ['effect before any batch', 'batch 1', 'effect after batch 1'], 'mergeUntil(1) leaves the last step queued')
  t.equal(await queue.mergeUntil(0), true)
  t.same(seen.slice(3), ['batch 2'])
  t.equal(queue.length, 0)
})

t.test('a step that says stop stops the merging for good, the steps after it left unmerged', async t => {
  const queue = new MergeQueue(() => {})
  const seen: number[] = []
  queue.batch(Promise.resolve(parsed(1)), batch => { seen.push(batch.count); return false })
  queue.batch(Promise.resolve(parsed(2)), batch => { seen.push(batch.count); return true })
  t.equal(await queue.mergeUntil(0), false)
  t.same(seen, [1])
  t.equal(queue.length, 1)
  t.equal(await queue.mergeUntil(0), false, 'and stays stopped')
  queue.step(() => { seen.push(3); return true })
  t.same(seen, [1], 'a step queued after the stop is not taken')
})

t.test('a merged batch gives its read memory back for the next batch', async t => {
  const memory = new BatchMemory(16)
  const queue = new MergeQueue(read => memory.give(read))
  const read = memory.take(16)
  queue.batch(Promise.resolve(parsed(1, read)), () => true)
  await queue.mergeUntil(0)
  t.equal(memory.take(16).buffer, read.buffer, 'the same memory is taken again')
})

t.test('a failed batch rejects mergeUntil, and the batches after it never go unhandled', async t => {
  const queue = new MergeQueue(() => {})
  const failure = new Error('the parse thread died')
  queue.batch(Promise.reject(failure), () => true)
  // Rejected before anyone awaits it: without the queue's own handler this would be an unhandled rejection.
  queue.batch(Promise.reject(failure), () => true)
  await t.rejects(queue.mergeUntil(0), failure)
})
