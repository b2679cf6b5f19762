// A thread that stops working collects once; that collection takes the old generation's garbage, and on Node 22+
// gives the young generation back.
import t from 'tap'
import { getHeapSpaceStatistics } from 'node:v8'
import { collectWhenIdle } from '../../src/serving/collect-when-idle.js'
import { collectNow } from '../../src/snapshot/model/item-memory.js'

// Its timer is unref'd: this one keeps the test's process alive while it waits.
const alive = setInterval(() => {}, 1_000)
t.teardown(() => { clearInterval(alive) })

// Long enough that a timer's turn stretched by a loaded machine (another test's threads on both cores) does
// not read as 20% of a period's work: at 100 ms one did, once in a clean-clone run.
const PERIOD_MS = 250

/** Keeps this thread's loop busy for `ms`, as answering would. */
function work (ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}

t.test('one collection when work stops, none while it stays idle, one again after more work', async t => {
  let collections = 0
  let collected = (): void => {}
  const stop = collectWhenIdle({ everyMs: PERIOD_MS, collect: () => { collections++; collected() } })
  t.teardown(stop)
  const next = async (): Promise<void> => { await new Promise<void>(resolve => { collected = resolve }) }

  let first = next()
  work(3 * PERIOD_MS)
  await first
  t.equal(collections, 1, 'collected once the loop went idle')
  // Idle for six more periods: no collection until there is work again.
  for (let i = 0; i < 6; i++) await new Promise(resolve => setTimeout(resolve, PERIOD_MS))
  t.equal(collections, 1, 'not again while idle')
  first = next()
  work(3 * PERIOD_MS)
  await first
  t.equal(collections, 2, 'again after more work')
})

t.test('never while the thread stays idle from the start', async t => {
  let collections = 0
  const stop = collectWhenIdle({ everyMs: PERIOD_MS, collect: () => { collections++ } })
  t.teardown(stop)
  for (let i = 0; i < 4; i++) await new Promise(resolve => setTimeout(resolve, PERIOD_MS))
  t.equal(collections, 0)
})

t.test('a thread that has just loaded collects at its first idle period, with no work seen since', async t => {
  let collections = 0
  let collected = (): void => {}
  const once = new Promise<void>(resolve => { collected = resolve })
  const stop = collectWhenIdle({ everyMs: PERIOD_MS, worked: true, collect: () => { collections++; collected() } })
  t.teardown(stop)
  await once
  for (let i = 0; i < 4; i++) await new Promise(resolve => setTimeout(resolve, PERIOD_MS))
  t.equal(collections, 1, 'once, then not again while idle')
})

const newSpace = (): number => getHeapSpaceStatistics().find(space => space.space_name === 'new_space')?.space_size ?? 0
const major = Number(process.versions.node.split('.')[0])

t.test('the collection gives the young generation back', { skip: major < 22 ? `Node ${major}'s V8 has no last-resort collection: its young generation stays as it grew` : false }, async t => {
  // Survivors grow the young generation, as a thread under load does.
  let kept: Array<{ n: number, s: string }> = []
  for (let i = 0; i < 2e6; i++) {
    kept.push({ n: i, s: String(i) })
    if (kept.length > 50_000) kept = []
  }
  const grown = newSpace()
  collectNow(true)
  t.ok(newSpace() < grown / 2, `new space ${grown} → ${newSpace()} bytes`)
})

t.test('the collection takes old-generation garbage too, on every Node', async t => {
  let old: Array<{ n: number }> | null = Array.from({ length: 1e6 }, (_, n) => ({ n }))
  collectNow()
  const held = process.memoryUsage().heapUsed
  old = null
  collectNow(true)
  t.equal(old, null)
  t.ok(process.memoryUsage().heapUsed < held - 20e6, `heap used ${held} → ${process.memoryUsage().heapUsed} bytes`)
})
