// The reload's plan, on its own: a new snapshot is loaded, the served chain is extended, anything else is
// built again from the served snapshot; a reread always loads.
import t from 'tap'
import { planReload } from '../../../src/snapshot/store/plan-reload.js'

t.test('nothing served, or another snapshot: load it', async t => {
  t.same(planReload(null, null), { kind: 'load' })
  t.same(planReload(null, { changes: 0 }), { kind: 'load' })
  t.same(planReload(2, null), { kind: 'load' })
})

t.test('the served chain begins the wanted one: only the new change files, from the first not served', async t => {
  t.same(planReload(0, { changes: 0 }), { kind: 'extend', from: 0 })
  t.same(planReload(3, { changes: 3 }), { kind: 'extend', from: 3 })
})

t.test('the same snapshot with another list of change files (edited, removed, a step back): built again', async t => {
  t.same(planReload(3, { changes: 1 }), { kind: 'rebuild' })
  t.same(planReload(3, { changes: 0 }), { kind: 'rebuild' })
})

t.test('a reread loads whatever is served', async t => {
  t.same(planReload(0, { changes: 0 }, true), { kind: 'load' })
  t.same(planReload(2, { changes: 2 }, true), { kind: 'load' })
})
