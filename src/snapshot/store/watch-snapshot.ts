// Watches the snapshot's directory (a watch on the file itself can go silent after the file is deleted
// and recreated) and calls back once a burst of writes to the file has gone quiet.
import { EventEmitter } from 'node:events'
import { dirname, resolve } from 'node:path'
import { watch } from 'chokidar'

export interface SnapshotWatcher extends EventEmitter<{ file: ['add' | 'change' | 'unlink'] }> {
  /** Resolves once the watch is in place: writes from then on are seen. */
  ready: Promise<void>
  close: () => Promise<void>
}

export interface WatchOptions {
  /** Quiet time after the last event before `onChange` runs: a burst of saves costs one load. */
  debounceMs: number
  onError?: (error: Error) => void
}

export function watchSnapshot (file: string, onChange: () => void, { debounceMs, onError }: WatchOptions): SnapshotWatcher {
  const target = resolve(file)
  const dir = dirname(target)
  const watcher = watch(dir, {
    depth: 0,
    ignoreInitial: true,
    // Everything in the directory but the snapshot (editors' temp and backup files included) is noise.
    ignored: (path: string) => path !== dir && resolve(path) !== target
  })
  const events = new EventEmitter<{ file: ['add' | 'change' | 'unlink'] }>()
  let timer: NodeJS.Timeout | null = null
  const schedule = () => {
    if (timer !== null) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      onChange()
    }, debounceMs)
  }
  // A rename over the file arrives as `add` (or `change` when chokidar pairs it with the unlink).
  // `unlink` alone changes nothing: the last good snapshot stays until a new file appears.
  watcher.on('add', () => { schedule(); events.emit('file', 'add') })
  watcher.on('change', () => { schedule(); events.emit('file', 'change') })
  // A directory where the file was cannot be served, but the failed load tells the operator so.
  watcher.on('addDir', path => { if (path !== dir) { schedule(); events.emit('file', 'add') } })
  watcher.on('unlink', () => events.emit('file', 'unlink'))
  watcher.on('error', error => onError?.(error as Error))
  const ready = new Promise<void>(resolve => watcher.once('ready', () => resolve()))
  return Object.assign(events, {
    ready,
    async close () {
      if (timer !== null) clearTimeout(timer)
      timer = null
      await watcher.close()
    }
  })
}
