// The snapshot watcher on a real directory (chokidar on this machine's file system): a burst of writes calls
// back once it has gone quiet, and the quiet time is never shorter than chokidar's own throttle.
import t from 'tap'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SHORTEST_QUIET_MS, watchSnapshot } from '../../src/sources/watched-file.js'
import { tempDir } from '../helpers.js'

t.test('a write within chokidar\'s 50 ms of the one before is read: with RELOAD_DEBOUNCE_MS 0 the quiet time is still 50 ms', async t => {
  const file = join(await tempDir(t), 'snapshot.json')
  writeFileSync(file, 'first')
  let read: (text: string) => void = () => {}
  const firstRead = new Promise<string>(resolve => { read = resolve })
  const watcher = watchSnapshot(file, () => { read(readFileSync(file, 'utf8')) }, { debounceMs: 0 })
  t.teardown(() => watcher.close())
  await watcher.ready
  const heard = once(watcher, 'file')
  writeFileSync(file, 'second')
  await heard
  // A millisecond after the event chokidar passed on: a quiet time of 0 would have run first (timers of one
  // duration run in the order set), and this write's own event is dropped (one per 50 ms).
  await new Promise(resolve => setTimeout(resolve, 1))
  writeFileSync(file, 'third')
  t.equal(await firstRead, 'third', 'the load after the burst reads its last write')
  t.equal(SHORTEST_QUIET_MS, 50)
})

t.test('a link re-pointed to a file not there yet: told, and the file\'s appearing is a change', async t => {
  const dir = await tempDir(t)
  const { mkdirSync, renameSync, symlinkSync } = await import('node:fs')
  mkdirSync(join(dir, 'releases'))
  writeFileSync(join(dir, 'releases', 'v1.json'), 'first')
  const file = join(dir, 'snapshot.json')
  symlinkSync(join('releases', 'v1.json'), file)
  let changed: () => void = () => {}
  const watcher = watchSnapshot(file, () => { changed() }, { debounceMs: 0 })
  t.teardown(() => watcher.close())
  await watcher.ready
  const told = once(watcher, 'danglingLink')
  // As `ln -sfn` does it: a new link renamed over the old.
  symlinkSync(join('releases', 'v2.json'), join(dir, 'next'))
  renameSync(join(dir, 'next'), file)
  t.same(await told, [join(dir, 'releases', 'v2.json'), true], 'the target named, and watched for')
  const appeared = new Promise<void>(resolve => { changed = resolve })
  writeFileSync(join(dir, 'releases', 'v2.json'), 'second')
  await appeared
  t.equal(readFileSync(file, 'utf8'), 'second', 'the change is called back once the file is there')
})
