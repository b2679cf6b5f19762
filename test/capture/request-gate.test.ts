// The gate in front of the source: never more requests in flight than allowed, a pause that holds every
// request back, and waits that end when the capture is aborted.
import t from 'tap'
import { RequestGate } from '../../src/capture/request-gate.js'

t.test('at most N in flight; a released slot goes to the first waiting request', async t => {
  const gate = new RequestGate(2, null)
  const signal = new AbortController().signal
  const order: string[] = []
  const a = await gate.enter(signal)
  const b = await gate.enter(signal)
  const c = gate.enter(signal).then(release => { order.push('c'); return release })
  const d = gate.enter(signal).then(release => { order.push('d'); return release })
  await Promise.resolve()
  t.same(order, [], 'two in flight: the others wait')
  b()
  b()
  const releaseC = await c
  t.same(order, ['c'], 'one release, one slot, even when released twice')
  a()
  ;(await d)()
  releaseC()
  t.same(order, ['c', 'd'])
  ;(await gate.enter(signal))()
})

t.test('a slot handed over is still taken: the next request waits for it', async t => {
  const gate = new RequestGate(1, null)
  const signal = new AbortController().signal
  const first = await gate.enter(signal)
  const second = gate.enter(signal)
  first()
  const releaseSecond = await second
  let third = false
  const entered = gate.enter(signal).then(release => { third = true; return release })
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(third, 'one slot, held by the second request')
  releaseSecond()
  ;(await entered)()
  t.ok(third)
})

t.test('an abort ends a wait for a slot with the abort\'s reason, and frees its place in the line', async t => {
  const gate = new RequestGate(1, null)
  const held = await gate.enter(new AbortController().signal)
  const controller = new AbortController()
  const waiting = gate.enter(controller.signal)
  const reason = new Error('stop')
  controller.abort(reason)
  await t.rejects(waiting, reason)
  held()
  const next = await gate.enter(new AbortController().signal)
  next()
})

t.test('a pause holds every request back; an abort ends that wait too', async t => {
  const gate = new RequestGate(4, null)
  gate.pause(60_000)
  const controller = new AbortController()
  const waiting = gate.enter(controller.signal)
  const reason = new Error('interrupted')
  setImmediate(() => controller.abort(reason))
  await t.rejects(waiting, reason, 'the pause was being waited out')
  const free = new RequestGate(1, null)
  free.pause(0)
  ;(await free.enter(new AbortController().signal))()
})

t.test('a rate: the starts are spaced', async t => {
  // 100 per second: each start at least 10 ms after the one before, in the order asked. Measured on
  // performance.now(), the clock the gate reads: a start is taken on it no sooner than the rate allows, and
  // noted here a few microtasks later, so a gap can look short by those microtasks (a pause of the collector
  // among them at worst), hence 2 ms of slack. Without the rate the 20 starts come within a millisecond in all;
  // at half the rate they would take 95 ms, not 190.
  const rate = 100
  const interval = 1000 / rate
  const slack = 2
  const gate = new RequestGate(4, rate)
  const signal = new AbortController().signal
  const asked = Array.from({ length: 20 }, (_, i) => i + 1)
  const starts: Array<{ n: number, at: number }> = []
  await Promise.all(asked.map(async n => {
    const release = await gate.enter(signal)
    starts.push({ n, at: performance.now() })
    release()
  }))
  // Timers fire on the loop's millisecond clock, so some wake a fraction early: in the order asked all the same.
  t.same(starts.map(start => start.n), asked)
  const gaps = starts.slice(1).map((start, i) => Math.round((start.at - starts[i]!.at) * 100) / 100)
  t.same(gaps.filter(gap => gap < interval - slack), [], `no two starts closer than ${interval} ms (gaps: ${gaps.join(', ')})`)
  const span = starts.at(-1)!.at - starts[0]!.at
  t.ok(span >= (asked.length - 1) * interval - slack, `${asked.length} starts take at least ${(asked.length - 1) * interval} ms (took ${span.toFixed(1)})`)
})

t.test('a request aborted while in line for its start leaves at once: the ones behind it still start, in order', async t => {
  // 10 per second: the second waits 100 ms for its start, the third waits in line behind it.
  const gate = new RequestGate(4, 10)
  const signal = new AbortController().signal
  const controller = new AbortController()
  const starts: string[] = []
  const enter = async (name: string, own = signal): Promise<void> => { const release = await gate.enter(own); starts.push(name); release() }
  const first = enter('first')
  const second = enter('second')
  const third = enter('third', controller.signal)
  const fourth = enter('fourth')
  await first
  await new Promise(resolve => setImmediate(resolve))
  const reason = new Error('stop')
  controller.abort(reason)
  await t.rejects(third, reason)
  t.same(starts, ['first'], 'the aborted one left while the one ahead of it still waited')
  await Promise.all([second, fourth])
  t.same(starts, ['first', 'second', 'fourth'])
})
