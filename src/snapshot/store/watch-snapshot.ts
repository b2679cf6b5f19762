// Watches the snapshot's directory (a watch on the file goes silent once it is recreated) and the changes
// directory, and calls back once a burst of writes has gone quiet.
import { EventEmitter } from 'node:events'
import { dirname, resolve } from 'node:path'
import { watch } from 'chokidar'
import { isChangeFileName } from './chain-on-disk.js'

export interface SnapshotWatcher extends EventEmitter<{ file: ['add' | 'change' | 'unlink'] }> {
  /** Resolves once the watch is in place: writes from then on are seen. */
  ready: Promise<void>
  close: () => Promise<void>
}

interface WatchOptions {
  /** Quiet time after the last event before `onChange` runs: a burst of saves costs one load. */
  debounceMs: number
  onError?: (error: Error) => void
  /** The change files' directory, watched from its parent: it may not exist yet. */
  changesDir?: string | null
}

/**
 * chokidar 5 passes on at most one `change` of a path per 50 ms, with no trailing event: a shorter quiet time
 * could read the file before its last write and never hear of it.
 */
export const SHORTEST_QUIET_MS = 50

export function watchSnapshot (
  file: string, onChange: () => void, { debounceMs, onError, changesDir = null }: WatchOptions
): SnapshotWatcher {
  const quietMs = Math.max(debounceMs, SHORTEST_QUIET_MS)
  const target = resolve(file)
  const dir = dirname(target)
  const changes = changesDir === null ? null : resolve(changesDir)
  const roots = changes === null ? [dir] : [...new Set([dir, dirname(changes)])]
  /** A change file: `*.jsonl` right in the changes directory, not an editor's hidden temp or swap file. */
  const isChangeFile = (path: string): boolean =>
    changes !== null && dirname(path) === changes && isChangeFileName(path.slice(changes.length + 1))
  const watcher = watch(roots, {
    // One level down: a watch on a directory that does not exist yet sees nothing (chokidar 5).
    depth: changes === null ? 0 : 1,
    ignoreInitial: true,
    // Everything but the snapshot, the changes directory and its change files is noise.
    ignored: (path: string) => {
      const at = resolve(path)
      return !roots.includes(at) && at !== target && at !== changes && !isChangeFile(at)
    }
  })
  const events = new EventEmitter<{ file: ['add' | 'change' | 'unlink'] }>()
  let timer: NodeJS.Timeout | null = null
  const schedule = () => {
    if (timer !== null) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      onChange()
    }, quietMs)
  }
  // A rename over the file arrives as `add` (or `change`). `unlink` of the snapshot alone changes nothing:
  // the last good one stays until a new file appears; a change file removed is a change.
  const isSnapshot = (path: string): boolean => resolve(path) === target
  watcher.on('add', path => { schedule(); if (isSnapshot(path)) events.emit('file', 'add') })
  watcher.on('change', path => { schedule(); if (isSnapshot(path)) events.emit('file', 'change') })
  // A directory where the file was cannot be served, but the failed load tells the operator so.
  watcher.on('addDir', path => {
    if (roots.includes(resolve(path))) return
    schedule()
    if (isSnapshot(path)) events.emit('file', 'add')
  })
  watcher.on('unlink', path => {
    if (isSnapshot(path)) events.emit('file', 'unlink')
    else schedule()
  })
  watcher.on('unlinkDir', path => { if (resolve(path) === changes) schedule() })
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
