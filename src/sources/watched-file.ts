// SNAPSHOT_PATH and its changes directory as a source: watched (the snapshot's directory, as a watch on the file
// goes silent once it is recreated, and the changes one), and served again on a write, SIGHUP and unpin. The chain is
// the snapshot and the directory's change files in name order.
import { EventEmitter, once } from 'node:events'
import { readdir, readlink, stat } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { watch, type FSWatcher } from 'chokidar'
import type { Chain, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { StoreLogger } from '../snapshot/store/store-logger.js'
import type { ChainSink, ChainSource } from './chain-source.js'

interface WatchedFileOptions {
  changesDir: string | null
  /** SIGHUP reloads either way. */
  watch: boolean
  debounceMs: number
  log: StoreLogger
}

export class WatchedFile implements ChainSource {
  readonly remote = false
  watcher: SnapshotWatcher | null = null
  private sink: ChainSink | null = null
  /** Asking again meanwhile makes one more run. */
  private running: Promise<ReloadOutcome | 'held'> | null = null
  private again = false

  constructor (readonly shown: string, private readonly options: WatchedFileOptions) {}

  async chain (): Promise<Chain> {
    const { changesDir } = this.options
    if (changesDir === null) return { snapshot: this.shown, changes: [] }
    const changesMayCome = (await stat(changesDir).catch(() => null))?.isDirectory() === true
    return { snapshot: this.shown, changes: await changeFilesIn(changesDir), changesMayCome }
  }

  /** Watched from the start: a save during the first load is served after it. */
  async start (sink: ChainSink): Promise<void> {
    this.sink = sink
    if (!this.options.watch) return
    const { log } = this.options
    this.watcher = watchSnapshot(this.shown, changesDirOnly => {
      (changesDirOnly ? this.loadIfChanges() : this.load()).catch(() => {})
    }, {
      debounceMs: this.options.debounceMs,
      changesDir: this.options.changesDir,
      onError: error => log.error({ err: error }, 'snapshot watcher error')
    })
    this.watcher.on('changesDir', () => { sink.expectChanges() })
    this.watcher.on('danglingLink', (target, watching) => {
      log.warn({ snapshot: this.shown, target }, watching
        ? 'the snapshot is a link to a file that does not exist: the last good one stays served, and the file is loaded once it is there'
        : 'the snapshot is a link into a directory that does not exist: the last good one stays served until the link changes or SIGHUP')
    })
    await this.watcher.ready
  }

  async reloadAsked (): Promise<void> {
    if (this.sink?.holdBack('signal') === true) return
    this.options.log.info({}, 'SIGHUP: reloading the snapshot')
    await this.load()
  }

  async checkNow (): Promise<void> {
    await this.load()
  }

  async resume (): Promise<void> {
    await this.load()
  }

  /** A changes directory that appeared: served only once it holds change files. */
  private async loadIfChanges (): Promise<void> {
    const { changesDir } = this.options
    if (changesDir !== null && (await changeFilesIn(changesDir)).length > 0) await this.load()
  }

  /** The sink checks the pin just before each serve, so a pin's own serve, queued after, is never overtaken. */
  load (): Promise<ReloadOutcome | 'held'> {
    const sink = this.sink
    if (sink === null) throw new Error('the file is not followed yet (start first)')
    if (this.running !== null) {
      this.again = true
      return this.running
    }
    const run = (async () => {
      let outcome: ReloadOutcome | 'held'
      do {
        this.again = false
        outcome = await sink.serve(await this.chain(), { file: this.shown })
        if (outcome === 'held') return outcome
      } while (this.again)
      return outcome
    })()
    this.running = run
    run.finally(() => { this.running = null }).catch(() => {})
    return run
  }

  async stop (): Promise<void> {
    await this.watcher?.close()
  }

  status (): null {
    return null
  }
}

interface WatchEvents {
  file: ['add' | 'change' | 'unlink']
  /** The changes directory appeared: its files come as their own events. */
  changesDir: []
  /** The snapshot is a link to a file that does not exist: watched for (`watching`) if its directory exists. */
  danglingLink: [target: string, watching: boolean]
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
  // Where the snapshot links to, while that file does not exist: its appearing is a change of the snapshot.
  let linked: string | null = null
  let linkWatch: FSWatcher | null = null
  let closed = false
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
    if (isSnapshot(path)) {
      events.emit('file', 'unlink')
      // A link made to a file not there yet (chokidar follows links, and tells a dangling one as gone).
      danglingTarget(target).then(async to => {
        if (to === null || to === linked) return
        linked = to
        await linkWatch?.close()
        linkWatch = null
        const watching = await stat(dirname(to)).then(found => found.isDirectory(), () => false)
        if (watching && !closed) {
          const at = dirname(to)
          linkWatch = watch(at, { depth: 0, ignoreInitial: true, ignored: path => ![to, at].includes(resolve(path)) })
          linkWatch.on('add', () => { schedule() }).on('change', () => { schedule() })
          await once(linkWatch, 'ready')
          // Made while the watch began.
          if (await stat(to).then(() => true, () => false)) schedule()
        }
        events.emit('danglingLink', to, watching)
      }).catch((error: unknown) => onError?.(error as Error))
    } else {
      schedule()
    }
  })
  watcher.on('unlinkDir', path => { if (resolve(path) === changes) schedule() })
  watcher.on('error', error => onError?.(error as Error))
  const ready = new Promise<void>(resolve => watcher.once('ready', () => resolve()))
  return Object.assign(events, {
    ready,
    async close () {
      closed = true
      if (timer !== null) clearTimeout(timer)
      timer = null
      await linkWatch?.close()
      await watcher.close()
    }
  })
}

/** Where `file` links to when it is a link to nothing, else null. */
async function danglingTarget (file: string): Promise<string | null> {
  const to = await readlink(file).catch(() => null)
  if (to === null) return null
  const resolved = resolve(dirname(file), to)
  return await stat(resolved).then(() => null, () => resolved)
}

/** Not hidden: editors' swap and lock files start with a dot. */
function isChangeFileName (name: string): boolean {
  return name.endsWith('.jsonl') && !name.startsWith('.')
}

/** In code unit order (the same on every machine); none when `dir` is missing. */
async function changeFilesIn (dir: string): Promise<string[]> {
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' ||
      (error as NodeJS.ErrnoException).code === 'ENOTDIR') return []
    throw error
  }
  return entries
    .filter(entry => !entry.isDirectory() && isChangeFileName(entry.name))
    .map(entry => entry.name)
    .sort((a, b) => a < b ? -1 : a > b ? 1 : 0)
    .map(name => join(dir, name))
}
