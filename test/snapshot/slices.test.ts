// Snapshot work in its turn: work in slices gives the event loop its turns, the first slice included; jobs run one
// after another, however each ended.
import t from 'tap'
import { JobQueue } from '../../src/snapshot/job-queue.js'
import { runInSlices } from '../../src/snapshot/slices.js'

// src/snapshot/slices.ts: long work as generators, run in slices so a loading service keeps answering.
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

// src/snapshot/job-queue.ts: jobs one after another in the order given, a failed one not stopping the next.
t.test('jobs run one after another in the order given; a failed one does not stop the next', async t => {
  const jobs = new JobQueue()
  const ran: string[] = []
  let release = (): void => {}
  const first = jobs.run(async () => {
    ran.push('first starts')
    await new Promise<void>(resolve => { release = resolve })
    ran.push('first ends')
    return 1
  })
  const second = jobs.run(async () => { ran.push('second'); throw new Error('second failed') })
  const third = jobs.run(async () => { ran.push('third'); return 3 })
  await new Promise(resolve => setImmediate(resolve))
  t.same(ran, ['first starts'], 'the second waits for the first')
  release()
  t.equal(await first, 1)
  await t.rejects(second, /second failed/)
  t.equal(await third, 3)
  t.same(ran, ['first starts', 'first ends', 'second', 'third'])
})

t.test('idle waits for the jobs queued while it waits', async t => {
  const jobs = new JobQueue()
  const ran: string[] = []
  const queued: Array<Promise<void>> = []
  queued.push(jobs.run(async () => {
    ran.push('one')
    queued.push(jobs.run(async () => { ran.push('two, queued by one') }))
  }))
  await jobs.idle()
  t.same(ran, ['one', 'two, queued by one'])
  t.equal(queued.length, 2)
})
