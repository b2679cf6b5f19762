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
