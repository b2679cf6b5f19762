// Watches the snapshot's directory (a watch on the file goes silent once it is recreated) and the changes one.
import { EventEmitter } from 'node:events'
import { dirname, resolve } from 'node:path'
import { watch } from 'chokidar'
import { isChangeFileName } from './chain-on-disk.js'

interface WatchEvents {
  file: ['add' | 'change' | 'unlink']
  /** The changes directory appeared: its files come as their own events. */
  changesDir: []
}

export interface SnapshotWatcher extends EventEmitter<WatchEvents> {
  ready: Promise<void>
  close: () => Promise<void>
}

interface WatchOptions {
  /** A burst of saves costs one load. */
  debounceMs: number
  onError?: (error: Error) => void
  /** Watched from its parent: it may not exist yet. */
  changesDir?: string | null
}

/** chokidar 5 passes on one `change` per path per 50 ms, with no trailing event: shorter could miss a last write. */
export const SHORTEST_QUIET_MS = 50

/** `onChange(changesDirOnly)`: true when all the quiet time saw was the changes directory appearing. */
export function watchSnapshot (
  file: string, onChange: (changesDirOnly: boolean) => void, { debounceMs, onError, changesDir = null }: WatchOptions
): SnapshotWatcher {
  const quietMs = Math.max(debounceMs, SHORTEST_QUIET_MS)
  const target = resolve(file)
  const dir = dirname(target)
  const changes = changesDir === null ? null : resolve(changesDir)
  const roots = changes === null ? [dir] : [...new Set([dir, dirname(changes)])]
  const isChangeFile = (path: string): boolean =>
    changes !== null && dirname(path) === changes && isChangeFileName(path.slice(changes.length + 1))
  const watcher = watch(roots, {
    // One level down: a watch on a directory that does not exist yet sees nothing (chokidar 5).
    depth: changes === null ? 0 : 1,
    ignoreInitial: true,
    ignored: (path: string) => {
      const at = resolve(path)
      return !roots.includes(at) && at !== target && at !== changes && !isChangeFile(at)
    }
  })
  const events = new EventEmitter<WatchEvents>()
  let timer: NodeJS.Timeout | null = null
  let changesDirOnly = true
  const schedule = (changesDir = false) => {
    if (!changesDir) changesDirOnly = false
    if (timer !== null) clearTimeout(timer)
    timer = setTimeout(() => {
      const only = changesDirOnly
      timer = null
      changesDirOnly = true
      onChange(only)
    }, quietMs)
  }
  // `unlink` of the snapshot changes nothing (the last good one stays); of a change file, it is a change.
  const isSnapshot = (path: string): boolean => resolve(path) === target
  watcher.on('add', path => { schedule(); if (isSnapshot(path)) events.emit('file', 'add') })
  watcher.on('change', path => { schedule(); if (isSnapshot(path)) events.emit('file', 'change') })
  // A directory where the file was cannot be served, but the failed load tells the operator so.
  watcher.on('addDir', path => {
    if (roots.includes(resolve(path))) return
    // Its files come as events of their own, but one made as chokidar read it may be missed: read then, served only
    // if it holds change files (a reload of the snapshot alone would read it again).
    if (resolve(path) === changes) {
      events.emit('changesDir')
      schedule(true)
      return
    }
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
