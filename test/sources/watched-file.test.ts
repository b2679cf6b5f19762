// src/sources/watched-file.ts: SNAPSHOT_PATH as a source, served again when asked, signalled or unpinned, and its watcher.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ChainSink, FollowCause } from '../../src/sources/chain-source.js'
import type { Chain, ReloadOutcome } from '../../src/snapshot/store/snapshot-store.js'
import { SHORTEST_QUIET_MS, WatchedFile, watchSnapshot } from '../../src/sources/watched-file.js'
import { tempDir } from '../helpers.js'

// WatchedFile, on a sink the test controls: loads asked during a serve, SIGHUP and pins.
const SILENT = { info () {}, warn () {}, error () {} }

/** A sink whose serves end when the test says so, and a pin the test sets. */
function controlledSink () {
  const served: Chain[] = []
  const pending: Array<(outcome: ReloadOutcome) => void> = []
  const held: FollowCause[] = []
  let pinned = false
  let started: () => void = () => {}
  const holdBack = (cause: FollowCause): boolean => {
    if (pinned) held.push(cause)
    return pinned
  }
  const serve = async (chain: Chain, heldBackBy?: FollowCause): Promise<ReloadOutcome | 'held'> => {
    if (heldBackBy !== undefined && holdBack(heldBackBy)) return 'held'
    served.push(chain)
    started()
    return await new Promise(resolve => pending.push(resolve))
  }
  const sink: ChainSink = {
    pinned: () => pinned,
    holdBack,
    serve: serve as ChainSink['serve'],
    expectChanges: () => {}
  }
  const nextServe = () => new Promise<void>(resolve => { started = resolve })
  return { sink, served, pending, held, nextServe, pin: (on: boolean) => { pinned = on } }
}

/** A snapshot file, not watched (the test asks), started on a controlled sink. */
async function unwatched (t: Test, changes = false) {
  const dir = await tempDir(t)
  const file = new WatchedFile(join(dir, 'snapshot.json'), {
    changesDir: changes ? join(dir, 'changes') : null, watch: false, debounceMs: 0, log: SILENT
  })
  const control = controlledSink()
  await file.start(control.sink)
  return { dir, file, control }
}

t.test('asks during a serve make exactly one more, which reads the directory again', async t => {
  const { dir, file, control } = await unwatched(t, true)
  let next = control.nextServe()
  const first = file.load()
  await next
  t.same(control.served, [{ snapshot: join(dir, 'snapshot.json'), changes: [], changesMayCome: false }])
  await mkdir(join(dir, 'changes'))
  await writeFile(join(dir, 'changes', '0001.jsonl'), '')
  const second = file.load()
  const third = file.load()
  t.equal(second, first, 'one promise for the whole run')
  t.equal(third, first)
  next = control.nextServe()
  control.pending.shift()!('failed')
  await next
  t.equal(control.served.length, 2, 'exactly one more serve for the two asks during the first')
  t.same(control.served[1], { snapshot: join(dir, 'snapshot.json'), changes: [join(dir, 'changes', '0001.jsonl')], changesMayCome: true })
  control.pending.shift()!('loaded')
  t.equal(await first, 'loaded', 'the last run\'s outcome')
  next = control.nextServe()
  const later = file.load()
  t.not(later, first, 'an ask after the run starts a new one')
  await next
  control.pending.shift()!('loaded')
  await later
})

t.test('SIGHUP while pinned serves nothing: the pin is asked, once', async t => {
  const { dir, file, control } = await unwatched(t)
  control.pin(true)
  await file.reloadAsked()
  t.same(control.held, ['signal'])
  t.same(control.served, [])
  control.pin(false)
  const next = control.nextServe()
  const asked = file.reloadAsked()
  await next
  t.same(control.served, [{ snapshot: join(dir, 'snapshot.json'), changes: [] }])
  control.pending.shift()!('loaded')
  await asked
})

t.test('a pin set while a serve runs holds back the one more asked for meanwhile: a pin is never overtaken', async t => {
  const { dir, file, control } = await unwatched(t)
  const next = control.nextServe()
  const first = file.load()
  await next
  t.equal(file.load(), first, 'asked again during the serve')
  control.pin(true)
  control.pending.shift()!('loaded')
  t.equal(await first, 'held')
  t.equal(control.served.length, 1, 'nothing served after the pin')
  t.same(control.held, [{ file: join(dir, 'snapshot.json') }], 'the newer file noticed')
})

// watchSnapshot on a real directory (chokidar): a burst calls back once quiet, never sooner than chokidar's own throttle.
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
