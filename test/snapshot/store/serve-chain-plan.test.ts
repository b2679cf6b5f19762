// The reload's plan, on its own: every case the store's execute carries out, decided here. A new snapshot is read,
// the served chain is extended, anything else is built again from the served snapshot; a snapshot alone is read
// again; a refused change file keeps the served state when serving less would take back what is served.
import t from 'tap'
import { planReload, type ServedPart } from '../../../src/snapshot/store/serve-chain.js'

const part = (changes: number, laterApplied: boolean[] = [], pathApplied: boolean[] = []): ServedPart =>
  ({ changes, laterApplied, pathApplied })

t.test('nothing served, or another snapshot: read it, then apply every change file beside the served state', async t => {
  const read = { base: 'read', from: 0, eachServed: false }
  t.match(planReload(0, null, null), read)
  t.match(planReload(2, null, part(0)), read)
  t.match(planReload(2, 3, null), { ...read, keepServedIfRefused: [false, false] }, 'a refusal serves what came before it')
})

t.test('a snapshot alone where one alone is served: read again, even unchanged (a source hands it when it may differ)', async t => {
  t.match(planReload(0, 0, part(0)), { base: 'read' })
  t.match(planReload(1, 0, part(0, [false], [false])), { base: 'served', from: 0 }, 'with a change file: extended')
})

t.test('a snapshot alone its source knows by digest to be the one served (a download, a kept copy): not read again', async t => {
  t.match(planReload(0, 0, { ...part(0), known: true }), { base: 'served', from: 0, eachServed: true })
  t.match(planReload(0, 2, { ...part(0), known: true }), { base: 'root' }, 'served with change files: the root again')
})

t.test('the served chain begins the wanted one: only the new change files, each served as it is made', async t => {
  t.match(planReload(1, 0, part(0, [false], [false])), { base: 'served', from: 0, eachServed: true })
  t.match(planReload(5, 3, part(3, [false, false], [true, true, true, false, false])), { base: 'served', from: 3, eachServed: true })
  t.match(planReload(3, 3, part(3, [], [true, true, true])), { base: 'served', from: 3 }, 'nothing new: the same state')
  t.match(planReload(2, 2, part(2, [], [true, true])), { base: 'served', from: 2 }, 'the snapshot with its change files again')
})

t.test('the same snapshot with another list of change files (edited, removed, a step back): built again from the root', async t => {
  t.match(planReload(1, 3, part(1, [], [true])), { base: 'root', from: 0, eachServed: false })
  t.match(planReload(0, 3, part(0)), { base: 'root', from: 0 })
})

t.test('a refused change file keeps the served state only when serving less would take back a change served now', async t => {
  // Served: a, b. Wanted: a, x, b (x new, b the same bytes): refusing x and serving a alone would take back b.
  t.same(planReload(3, 2, part(1, [false, true], [true, false, true])).keepServedIfRefused, [true, true, true])
  // Served: a, b. Wanted: a, b', c: b' is b edited in place (its path served) and c is new.
  t.same(planReload(3, 2, part(1, [false, false], [true, true, false])).keepServedIfRefused, [true, true, false])
  // Extending a, b with c, d: a refusal of either only waits.
  t.same(planReload(4, 2, part(2, [false, false], [true, true, false, false])).keepServedIfRefused, [true, true, false, false])
})
