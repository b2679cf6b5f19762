// A derived version's order kept as pieces of the ones before: every edit reads as the same edit of a
// plain array, pieces or flattened.
import t from 'tap'
import fc from 'fast-check'
import { RankOrder, maxPiecesFor } from '../../../src/snapshot/model/rank-order.js'
import { runToEnd } from '../../../src/snapshot/slices.js'
import { runs } from '../../property-runs.js'

/** An edit: ranks to remove (of the order before it) and slots to add at ranks of the order before it. */
const edit = fc.record({
  removeAt: fc.array(fc.nat(), { maxLength: 6 }),
  addAt: fc.array(fc.nat(), { maxLength: 6 })
})

/** Every rank of `order` read as `plain` has it, by pages of five and one by one. */
function checkReads (order: RankOrder, plain: readonly number[]): void {
  if (order.size !== plain.length) throw new Error(`size ${order.size}, expected ${plain.length}`)
  for (let from = 0; from <= plain.length; from++) {
    const to = Math.min(plain.length, from + 5)
    if ([...order.slots(from, to)].join() !== plain.slice(from, to).join()) throw new Error(`ranks ${from}-${to}: ${[...order.slots(from, to)].join()} against ${plain.slice(from, to).join()}`)
    if (from < plain.length && order.slotAt(from) !== plain[from]) throw new Error(`rank ${from}`)
  }
}

t.test('pieces read as the plain array the same edits make, however many pieces and after flattening; older versions unchanged', async t => {
  fc.assert(fc.property(fc.nat({ max: 40 }), fc.array(edit, { maxLength: 8 }), fc.constantFrom(3, 8192, undefined), (size, edits, maxPieces) => {
    let order = RankOrder.identity(size)
    let plain = Array.from({ length: size }, (_, i) => i)
    let next = 1000
    // Versions share pieces: each must still read as it did once the later ones are made.
    const versions: Array<[RankOrder, number[]]> = [[order, plain]]
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
      if (maxPieces === 3 && order.pieceCount > 3) throw new Error(`${order.pieceCount} pieces were not flattened`)
      if (maxPieces === undefined && order.pieceCount > maxPiecesFor(order.size)) throw new Error(`${order.pieceCount} pieces for ${order.size} slots were not flattened`)
      checkReads(order, plain)
      versions.push([order, plain])
    }
    for (const [version, itsPlain] of versions) checkReads(version, itsPlain)
  }), { numRuns: runs(500) })
  t.pass('500 random edit sequences')
})

t.test('an order stays in pieces until they would cost nearly its flat array (a sixteenth of its slots), with no fixed cap', async t => {
  // At 1M items a cap of 8,192 pieces wrote a language's order (625,000 slots) out flat at the fourth
  // change file: 2.5 MB at once, for pieces that had cost a fifth of that.
  const size = 200_000
  const everyNth = (order: RankOrder, n: number, offset: number): number[] => Array.from({ length: Math.floor((order.size - offset) / n) }, (_, i) => offset + i * n)
  const plain = Array.from({ length: size }, (_, i) => i)
  let order = RankOrder.identity(size)
  // 10,000 removals spread out: some 10,000 pieces, past the old cap and below a sixteenth of 190,000.
  const first = everyNth(order, 20, 7)
  order = runToEnd(order.edit(first, new Uint32Array(0), []))
  for (const rank of [...first].reverse()) plain.splice(rank, 1)
  t.ok(order.pieceCount > 8192 && order.pieceCount <= maxPiecesFor(order.size), `${order.pieceCount} pieces for ${order.size} slots: kept as pieces`)
  t.equal([...order.slots(0, order.size)].join(), plain.join(), 'every slot as the plain array has it')
  // 15,000 more: past a sixteenth of the slots left, written out flat.
  const second = everyNth(order, 12, 5)
  order = runToEnd(order.edit(second, new Uint32Array(0), []))
  for (const rank of [...second].reverse()) plain.splice(rank, 1)
  t.equal(order.pieceCount, 1, `${order.size} slots cut in more pieces than a sixteenth of them: written out flat`)
  t.equal([...order.slots(0, order.size)].join(), plain.join(), 'every slot as the plain array has it, flat')
  t.equal(maxPiecesFor(50), 16, 'a small order may have 16 pieces')
})

t.test('an edit of an order in many pieces yields while it copies them, not only between its own cuts', async t => {
  // One cut at the end of an order in ~20,000 pieces: every piece is copied in one cut's stretch.
  let order = RankOrder.identity(400_000)
  order = runToEnd(order.edit(Array.from({ length: 20_000 }, (_, i) => i * 20), new Uint32Array(0), []))
  const steps = order.edit([order.size - 1], new Uint32Array(0), [])
  let yields = 0
  while (steps.next().done !== true) yields++
  t.ok(yields >= 4, `${yields} yields while ~20,000 pieces were copied`)
})
