// A derived version's order kept as pieces of the ones before: every edit reads as the same edit of a
// plain array, pieces or flattened.
import t from 'tap'
import fc from 'fast-check'
import { RankOrder } from '../../../src/snapshot/model/rank-order.js'
import { runToEnd } from '../../../src/snapshot/slices.js'

/** An edit: ranks to remove (of the order before it) and slots to add at ranks of the order before it. */
const edit = fc.record({
  removeAt: fc.array(fc.nat(), { maxLength: 6 }),
  addAt: fc.array(fc.nat(), { maxLength: 6 })
})

t.test('pieces read as the plain array the same edits make, however many pieces and after flattening', async t => {
  fc.assert(fc.property(fc.nat({ max: 40 }), fc.array(edit, { maxLength: 8 }), fc.constantFrom(3, 8192), (size, edits, maxPieces) => {
    let order = RankOrder.identity(size)
    let plain = Array.from({ length: size }, (_, i) => i)
    let next = 1000
    for (const { removeAt, addAt } of edits) {
      const removed = [...new Set(removeAt.filter(r => r < plain.length))].sort((a, b) => a - b)
      const addedAt = addAt.map(r => r % (plain.length + 1)).sort((a, b) => a - b)
      const added = addedAt.map(() => next++)
      const result: number[] = []
      for (let rank = 0, a = 0; rank <= plain.length; rank++) {
        while (a < addedAt.length && addedAt[a] === rank) result.push(added[a++]!)
        if (rank < plain.length && !removed.includes(rank)) result.push(plain[rank]!)
      }
      order = runToEnd(order.edit(removed, Uint32Array.from(added), addedAt, maxPieces))
      plain = result
      if (order.size !== plain.length) throw new Error(`size ${order.size}, expected ${plain.length}`)
      if (maxPieces === 3 && order.pieceCount > 3) throw new Error(`${order.pieceCount} pieces were not flattened`)
      for (let from = 0; from <= plain.length; from++) {
        const to = Math.min(plain.length, from + 5)
        if ([...order.slots(from, to)].join() !== plain.slice(from, to).join()) throw new Error(`ranks ${from}-${to}: ${[...order.slots(from, to)].join()} against ${plain.slice(from, to).join()}`)
        if (from < plain.length && order.slotAt(from) !== plain[from]) throw new Error(`rank ${from}`)
      }
    }
  }), { numRuns: 500 })
  t.pass('500 random edit sequences')
})
