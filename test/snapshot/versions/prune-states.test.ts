// The default layout's states in a real directory: the replica's own is marked used; others not used for the days
// given are removed and said, newer ones and anything else stay.
import t from 'tap'
import { mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { claimState, pruneStates } from '../../../src/snapshot/versions/prune-states.js'
import { tempDir } from '../../helpers.js'

const DAY = 24 * 60 * 60 * 1000

async function state (dir: string, name: string, daysAgo: number): Promise<string> {
  const path = join(dir, name)
  await mkdir(join(path, 'v1'), { recursive: true })
  await writeFile(join(path, 'v1', 'snapshot.json'), 'x'.repeat(1000))
  const then = new Date(Date.now() - daysAgo * DAY)
  await utimes(path, then, then)
  return path
}

t.test('states of the default layout unused for the days given are removed, each said; the rest stay', async t => {
  const dir = await tempDir(t)
  const own = await state(dir, 'state-aaaaaaaaaaaa', 90)
  await state(dir, 'state-bbbbbbbbbbbb', 31)
  await state(dir, 'state-cccccccccccc', 29)
  // In use by a live process (this one) for longer than that: never removed.
  const running = await state(dir, 'state-eeeeeeeeeeee', 0)
  await writeFile(join(running, `.in-use-${process.pid}`), '')
  const then = new Date(Date.now() - 90 * DAY)
  await utimes(running, then, then)
  await state(dir, 'state', 90) // a STATE_DIR of its own: not the default layout's
  await writeFile(join(dir, 'snapshot-dddddddddddd.json'), '{}')
  const said: Array<[object, string]> = []
  const log = { info: (fields: object, message: string) => { said.push([fields, message]) }, warn () {}, error () {} }
  const letGo = await claimState(own, false, () => true)
  await pruneStates(own, 30, log)
  t.same((await readdir(dir)).sort(), ['snapshot-dddddddddddd.json', 'state', 'state-aaaaaaaaaaaa', 'state-cccccccccccc', 'state-eeeeeeeeeeee'])
  t.same(said, [[{ state: join(dir, 'state-bbbbbbbbbbbb'), unusedDays: 31, bytes: 1000 }, 'removed a state not used for STATE_PRUNE_DAYS']])
  t.ok(Date.now() - (await stat(own)).mtimeMs < DAY, 'its own state marked used now')
  t.ok((await readdir(own)).includes(`.in-use-${process.pid}`), 'and in use by this process')
  letGo()
  t.same(await readdir(own), ['v1'], 'let go: the mark goes, the state stays')
})

t.test('a state a start made goes whole when nothing was ever served', async t => {
  const dir = await tempDir(t)
  const made = join(dir, 'state-ffffffffffff')
  await mkdir(made)
  const letGo = await claimState(made, true, () => false)
  letGo()
  t.same(await readdir(dir), [])
})

t.test('0 days removes nothing; a STATE_DIR outside the default layout prunes nothing', async t => {
  const dir = await tempDir(t)
  const own = await state(dir, 'state-aaaaaaaaaaaa', 0)
  await state(dir, 'state-bbbbbbbbbbbb', 400)
  const log = { info () { t.fail('nothing is said') }, warn () {}, error () {} }
  await claimState(own, false, () => true)
  await pruneStates(own, 0, log)
  await pruneStates(join(dir, 'state'), 30, log)
  t.same((await readdir(dir)).sort(), ['state-aaaaaaaaaaaa', 'state-bbbbbbbbbbbb'])
})
