// SNAPSHOT_PATH and its changes directory as a source: served again on a write, SIGHUP and unpin.
import { stat } from 'node:fs/promises'
import { changeFilesIn } from '../snapshot/store/chain-on-disk.js'
import type { Chain, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { StoreLogger } from '../snapshot/store/store-logger.js'
import { watchSnapshot, type SnapshotWatcher } from '../snapshot/store/watch-snapshot.js'
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

  /** The pin is checked just before each serve, so a pin's own serve, queued after, is never overtaken. */
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
        const chain = await this.chain()
        if (sink.holdBack({ file: this.shown })) return 'held'
        outcome = await sink.serve(chain)
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
