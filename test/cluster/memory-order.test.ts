// A cluster's loads within one budget (cluster/memory-order.ts): the primary grants them in the order they
// are asked, at once while they fit together, one after another when they do not, and refuses one that
// cannot fit even with no other load under way. Memory figures are the test's own.
import t from 'tap'
import { LoadOrder, type LoadAnswer } from '../../src/cluster/memory-order.js'

const MB = 1024 * 1024

/** Three workers (pids 11, 12, 13) of 100 MB each and a primary of 50 MB, in a 1,000 MB budget. */
function cluster (): { order: LoadOrder, rss: Map<number, number> } {
  const rss = new Map([[11, 100 * MB], [12, 100 * MB], [13, 100 * MB]])
  const order = new LoadOrder({ bytes: 1000 * MB, source: 'MEMORY_LIMIT_MB' }, () => [...rss.keys()], pid => rss.get(pid) ?? 0, () => 50 * MB)
  return { order, rss }
}

/** An answer, or 'waiting' when none has come by the next turn of the event loop. */
async function answerOf (asked: Promise<LoadAnswer>): Promise<LoadAnswer | 'waiting'> {
  return await Promise.race([asked, new Promise<'waiting'>(resolve => setImmediate(() => resolve('waiting')))])
}

t.test('loads that fit together are granted at once, each with how far its worker may grow', async t => {
  const { order } = cluster()
  // 650 MB free: two loads of 300 MB fit.
  t.same(await answerOf(order.ask('a', 11, 300 * MB)), { ceiling: 1000 * MB - 250 * MB })
  t.same(await answerOf(order.ask('b', 12, 300 * MB)), { ceiling: 1000 * MB - 250 * MB - 300 * MB }, 'the first load\'s growth is kept for it')
})

t.test('loads that do not fit together wait their turn; a load ending lets the next in', async t => {
  const { order, rss } = cluster()
  t.same(await answerOf(order.ask('a', 11, 400 * MB)), { ceiling: 750 * MB })
  const second = order.ask('b', 12, 400 * MB)
  const third = order.ask('c', 13, 300 * MB)
  t.equal(await answerOf(second), 'waiting', 'not beside the first')
  // The first worker's load ends: it serves the new snapshot and has let the old one go.
  rss.set(11, 250 * MB)
  order.done('a')
  t.same(await answerOf(second), { ceiling: 1000 * MB - 50 * MB - 250 * MB - 100 * MB })
  t.equal(await answerOf(third), 'waiting', 'not beside the second either')
  rss.set(12, 250 * MB)
  order.done('b')
  t.same(await answerOf(third), { ceiling: 1000 * MB - 50 * MB - 500 * MB })
})

t.test('a load that cannot fit even alone is refused with the cluster\'s numbers', async t => {
  const { order } = cluster()
  t.same(await answerOf(order.ask('a', 11, 700 * MB)), { refused: { neededBytes: 700 * MB, freeBytes: 650 * MB, budgetBytes: 1000 * MB } })
})

t.test('one waiting behind a load is refused when that load ends and it still does not fit', async t => {
  const { order, rss } = cluster()
  await order.ask('a', 11, 400 * MB)
  const second = order.ask('b', 12, 500 * MB)
  t.equal(await answerOf(second), 'waiting')
  rss.set(11, 450 * MB)
  order.done('a')
  t.same(await answerOf(second), { refused: { neededBytes: 500 * MB, freeBytes: 300 * MB, budgetBytes: 1000 * MB } })
})

t.test('a worker that exits: its load is over, its questions dropped', async t => {
  const { order, rss } = cluster()
  await order.ask('a', 11, 400 * MB)
  const second = order.ask('b', 12, 400 * MB)
  t.equal(await answerOf(second), 'waiting')
  rss.delete(11)
  order.forget(11)
  t.same(await answerOf(second), { ceiling: 1000 * MB - 50 * MB - 100 * MB })
})
