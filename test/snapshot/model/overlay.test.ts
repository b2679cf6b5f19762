// A derived version's lists: each reads, page by page, as the plain array the same changes make; older versions
// unchanged; unions as the merged plain arrays.
import t from 'tap'
import fc from 'fast-check'
import { Overlay } from '../../../src/snapshot/model/overlay.js'
import { runs } from '../../property-runs.js'

/**
 * A flat listing of ranks 0..size-1 and added slots from 1000 up, each with a served place: a rank r sits at 2r + 1
 * and an added slot at an even place, so a slot before the rank r has a place ≤ 2r (and ties between added
 * slots are broken by slot number).
 */
const place = new Map<number, number>()
const before = (a: number, b: number): boolean => {
  const pa = a < 1000 ? 2 * a + 1 : place.get(a)!
  const pb = b < 1000 ? 2 * b + 1 : place.get(b)!
  return pa < pb || (pa === pb && a < b)
}
const sorted = (slots: number[]): number[] => [...slots].sort((a, b) => before(a, b) ? -1 : 1)

/** Every place of `list` read as `plain` has it, by pages of every start and length up to 5. */
function checkReads (list: Overlay, plain: readonly number[]): void {
  if (list.size !== plain.length) throw new Error(`size ${list.size}, expected ${plain.length}`)
  for (let from = 0; from <= plain.length + 1; from++) {
    for (let length = 0; length <= 5; length++) {
      const got = [...list.slots(from, from + length)].join()
      const expected = plain.slice(from, from + length).join()
      if (got !== expected) throw new Error(`places ${from}+${length}: ${got} against ${expected}`)
    }
  }
}

const edit = fc.record({ remove: fc.array(fc.nat(), { maxLength: 6 }), add: fc.array(fc.nat({ max: 80 }), { maxLength: 6 }) })

t.test('an overlay reads as the plain list its edits make; the versions before it are unchanged', async t => {
  fc.assert(fc.property(fc.nat({ max: 40 }), fc.boolean(), fc.array(edit, { maxLength: 8 }), (size, whole, edits) => {
    place.clear()
    // A company's list is every other rank of the listing; the whole list every rank.
    const base = Array.from({ length: size }, (_, i) => i).filter(rank => whole || rank % 2 === 0)
    let list = whole ? new Overlay(null, size) : Overlay.over(Uint32Array.from(base))
    let plain = [...base]
    let next = 1000
    const versions: Array<[Overlay, number[]]> = [[list, plain]]
    for (const { remove, add } of edits) {
      // Removed: some of the list's ranks and added slots, each once.
      const gone = [...new Set(remove.filter(i => i < plain.length).map(i => plain[i]!))]
      const added = add.map(at => {
        const slot = next++
        place.set(slot, 2 * Math.min(at, size))
        return slot
      })
      const inOrder = sorted(added)
      list = list.edit(
        gone.filter(slot => slot < 1000).sort((a, b) => a - b), new Set(gone.filter(slot => slot >= 1000)),
        inOrder, inOrder.map(slot => place.get(slot)! / 2), before
      )
      plain = sorted([...plain.filter(slot => !gone.includes(slot)), ...added])
      checkReads(list, plain)
      versions.push([list, plain])
    }
    for (const [version, itsPlain] of versions) checkReads(version, itsPlain)
  }), { numRuns: runs(500) })
  t.pass('500 random edit sequences')
})

t.test('a union of overlays reads as the union of their plain lists, each slot once', async t => {
  fc.assert(fc.property(fc.array(fc.record({
    ranks: fc.uniqueArray(fc.nat({ max: 30 })),
    remove: fc.array(fc.nat(), { maxLength: 4 }),
    add: fc.uniqueArray(fc.nat({ max: 8 }), { maxLength: 4 })
  }), { minLength: 1, maxLength: 4 }), lists => {
    place.clear()
    // Added slots are shared between lists (slot 1000 + k in each that adds k), as an item in several companies.
    for (let k = 0; k <= 8; k++) place.set(1000 + k, 2 * (k * 4))
    // A rank removed is gone from the whole listing: from every list that has it.
    const gone = new Set(lists.flatMap(({ ranks, remove }) => remove.filter(i => i < ranks.length).map(i => ranks[i]!)))
    const overlays = lists.map(({ ranks, add }) => {
      const base = Uint32Array.from([...ranks].sort((a, b) => a - b))
      const added = sorted(add.map(k => 1000 + k))
      return Overlay.over(base).edit([...base].filter(rank => gone.has(rank)), new Set(), added, added.map(slot => place.get(slot)! / 2), before)
    })
    const plain = sorted([...new Set(lists.flatMap(({ ranks, add }) => [...ranks.filter(rank => !gone.has(rank)), ...add.map(k => 1000 + k)]))])
    // Bits over ranks below 31, or the few ranks of a large listing sorted: the same union.
    checkReads(Overlay.union(overlays, 31, before), plain)
    checkReads(Overlay.union(overlays, 1_000_000, before), plain)
  }), { numRuns: runs(500) })
  t.pass('500 random unions, each made both ways')
})
