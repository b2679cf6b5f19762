import t from 'tap'
import { JobQueue } from '../../src/snapshot/job-queue.js'

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
