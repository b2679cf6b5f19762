// Work in slices gives the event loop its turns: the first slice included.
import t from 'tap'
import { runInSlices } from '../../src/snapshot/slices.js'

t.test('the first slice runs after a pause, in the check phase, not in the caller\'s callback', async t => {
  // An immediate queued before the call runs before the first step: the first slice runs in the check
  // phase, as every later one, and its pause waits a whole turn (timers and requests included).
  let turned = false
  setImmediate(() => { turned = true })
  const firstStepAfterATurn = await runInSlices((function * () { return turned })())
  t.ok(firstStepAfterATurn)
})

t.test('a turn of the event loop after each slice, and the steps run to their end', async t => {
  let turns = 0
  const ticker = setInterval(() => { turns++ }, 0)
  try {
    const steps = function * (): Generator<void, number> {
      // Steps of ~2 ms against slices of 1 ms: a turn after each, so the timer fires between them.
      for (let i = 0; i < 6; i++) {
        const end = performance.now() + 2
        while (performance.now() < end);
        yield
      }
      return turns
    }
    const seen = await runInSlices(steps(), 1)
    t.ok(seen >= 3, `the timer fired ${seen} times among six steps`)
  } finally {
    clearInterval(ticker)
  }
})
