// Holds the served model (a snapshot and its change files, ADR 026), swapped in one assignment; reloads never overlap.
import { EventEmitter } from 'node:events'
import type { MemoryBudget } from '../memory-budget.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import { JobQueue } from '../job-queue.js'
import type { ImageShelf } from '../images/image-shelf.js'
import type { StoreLogger } from './store-logger.js'
import { ReloadRecord, type ReloadStatus } from './reload-record.js'
import { prepareForChanges } from '../model/derive-version.js'
import {
  ChainExecutor, ChainFileReader, fileDigest, fileStamp, type Chain, type ChainFile, type ReaderOptions,
  type ReloadOutcome, type ServedChainState, type ServedFiles
} from './serve-chain.js'

export type { ReloadFailure } from './reload-record.js'

export type { Chain, ChainFile, ReloadOutcome } from './serve-chain.js'

/** `load` given (tests): no image is read or written. */
export interface StoreOptions extends ReaderOptions {
  log?: StoreLogger
  /** A pinned version's kept files, or the source's chain; null: `file` alone. */
  first?: Chain | null
  /** A run resolves once the serving threads serve its last model (ADR 029). */
  publish?: ((model: SnapshotModel) => Promise<void>) | null
}

const SILENT: StoreLogger = { info () {}, warn () {}, error () {} }

/** The store as sources and versions see it: one door (`serve`) and its state. */
export type ChainServer =
  Pick<SnapshotStore, 'file' | 'start' | 'current' | 'serve' | 'expectChanges' | 'status' | 'idle' | 'servedFiles' | 'on'>

/** `served`: any new state, the first load's included; `reloaded`: every reload after the first load. */
export class SnapshotStore extends EventEmitter<{ reloaded: [ReloadOutcome], served: [SnapshotModel] }> {
  private readonly state: ServedState
  private readonly executor: ChainExecutor
  /** Holds no model: a promise resolved with one kept it alive for the process's life. */
  private first: Promise<void> | null = null
  private readonly reader: ChainFileReader
  private readonly log: StoreLogger
  private readonly firstChain: Chain
  private readonly jobs = new JobQueue()
  /** Counts, refusals, and the refused file not read again while unchanged. */
  readonly record: ReloadRecord
  private readonly publish: ((model: SnapshotModel) => Promise<void>) | null
  /** Confirmations of images found by a stamp (ADR 042), stopped by `close`. */
  private readonly confirming = new AbortController()

  constructor (readonly file: string, options: StoreOptions = {}) {
    super()
    this.log = options.log ?? SILENT
    this.record = new ReloadRecord(this.log)
    this.reader = new ChainFileReader(this.record, this.log, options)
    this.state = new ServedState(this.log, this.images)
    const { state, reader, record, log } = this
    this.executor = new ChainExecutor({ state, reader, record, log })
    this.firstChain = options.first ?? { snapshot: file, changes: [] }
    this.publish = options.publish ?? null
  }

  /** Null when a test gives its own `load`. */
  get images (): ImageShelf | null {
    return this.reader.images
  }

  get budget (): MemoryBudget | null {
    return this.reader.budget
  }

  current (): SnapshotModel | null {
    return this.state.model
  }

  /** Once however often called; rejects on a bad snapshot: a service must not start. */
  async start (): Promise<SnapshotModel> {
    this.first ??= this.loadFirst()
    await this.first
    return this.state.model as SnapshotModel
  }

  private async loadFirst (): Promise<void> {
    const started = Date.now()
    const first = this.firstChain
    if (first.changesMayCome === true) this.state.changesMayCome()
    for (;;) {
      const read = await this.reader.root(first, false)
      if (read === 'changed') continue
      if ('error' in read) throw read.error
      // Closed while it loaded (only close aborts confirmations): nothing is served or kept after a shutdown.
      if (this.confirming.signal.aborted) {
        read.model.memory.retire()
        return
      }
      const snapshot = { file: first.snapshot, stamp: read.stamp, digest: read.model.info.version }
      this.state.swap(read.model, read.model, { snapshot, changes: [] })
      this.confirmRoot(first)
      break
    }
    // The snapshot is served first; a bad change file is then refused, not fatal.
    while (first.changes.length > 0 && await this.executor.serve(first, Date.now()) === 'superseded');
    await this.published()
    const model = this.state.model as SnapshotModel
    this.log.info({
      snapshot: this.file, generatedAt: model.info.generatedAt, items: model.itemCounts(), ms: Date.now() - started
    }, 'snapshot loaded')
    this.emit('served', model)
  }

  /** Only a run's last state (ADR 029). */
  private async published (): Promise<void> {
    const { model } = this.state
    if (this.publish !== null && model !== null) await this.publish(model)
  }

  status (): ReloadStatus {
    return this.record.status()
  }

  /** What a kept copy is checked against. */
  servedFiles (): { snapshot: Readonly<ChainFile>, changes: Array<Readonly<ChainFile>> } | null {
    const { chain } = this.state
    if (chain === null) return null
    return { snapshot: { ...chain.snapshot }, changes: chain.changes.map(file => ({ ...file })) }
  }

  /** Runs alone, after any other reload; planned then executed (ADR 030). */
  serve (chain: Chain): Promise<ReloadOutcome> {
    return this.jobs.run(async () => await this.runOnce(chain))
  }

  /** Runs until one is not superseded; one asked for during the first load runs after it. */
  private async runOnce (chain: Chain): Promise<ReloadOutcome> {
    await this.first?.catch(() => {})
    for (;;) {
      const root = this.state.root
      const outcome = await this.executor.serve(chain, Date.now())
      if (this.state.root !== root) this.confirmRoot(chain)
      await this.published()
      if (outcome === 'loaded') this.emit('served', this.state.model as SnapshotModel)
      this.emit('reloaded', outcome)
      if (outcome !== 'superseded') return outcome
    }
  }

  /** Resolves when no reload runs or waits (shutdown). Not the first load: a large one would hold a SIGTERM. */
  async idle (): Promise<void> {
    await this.jobs.idle()
  }

  /** Shutdown: a confirmation under way stops, and nothing is served after. */
  async close (): Promise<void> {
    this.confirming.abort()
    await this.idle()
  }

  /** A root served from an image found by the file's stamp alone is confirmed by the file's bytes later. */
  private confirmRoot (chain: Chain): void {
    const { root } = this.state
    const served = this.state.chain?.snapshot
    if (root === null || served === undefined || chain.snapshotDigest !== undefined) return
    if (root.info.fromImage !== undefined) this.confirm(served.file, served.stamp, root.info.version)
  }

  /**
   * A stamp says a file is unchanged, not that its bytes are the image's (a file put back with its old time): they
   * are digested in the background (a large file on a low-priority thread), and read again if other (ADR 043).
   */
  private confirm (file: string, stamp: string | null, version: string): void {
    if (stamp === null) return
    const { signal } = this.confirming
    fileDigest(file, 'follow', signal).then(async digest => {
      if (digest === version || signal.aborted || await fileStamp(file) !== stamp) return
      this.log.warn(
        { snapshot: file, image: version, digest },
        'the snapshot is not the bytes its version image was made from: the image is removed and the snapshot read again'
      )
      await this.images?.discard(version)
      const again = await this.jobs.run(async () => {
        const served = this.state.chain
        if (signal.aborted || served?.snapshot.file !== file || served.snapshot.digest !== version) return null
        this.state.doubtRoot()
        const changes = served.changes.map(change => change.file)
        return { snapshot: file, changes, changesMayCome: this.state.expectsChanges }
      })
      if (again !== null) await this.serve(again)
    }).catch(async (error: unknown) => {
      // A file written meanwhile is its own reload's.
      if (signal.aborted || await fileStamp(file) !== stamp) return
      this.log.warn({ snapshot: file, err: error }, 'the snapshot\'s digest could not be confirmed')
    })
  }

  /** What the first change file would wait for, begun now (issue 57: a directory made after the start). */
  expectChanges (): void {
    this.state.expectChanges()
  }

  private refuse (file: string, error: unknown, what: 'snapshot' | 'change file'): ReloadOutcome {
    return this.record.refuse(file, error, what, this.state.model !== null)
  }
}

/**
 * What the store serves: the model, the root of its chain (made ready for change files once they may come, ADR 026),
 * and the chain's files; swapped in one assignment, and the one place a version is let go (ADR 030).
 */
class ServedState implements ServedChainState {
  private served: SnapshotModel | null = null
  /** Kept while versions derived from it are served. */
  private servedRoot: SnapshotModel | null = null
  private files: ServedFiles | null = null
  private rootReady: Promise<void> | null = null
  private changesExpected = false
  /** The next serve reads its snapshot, whatever is served: an image's bytes were found other than the file's. */
  private rootDoubted = false

  constructor (private readonly log: StoreLogger, private readonly images: ImageShelf | null) {}

  get model (): SnapshotModel | null {
    return this.served
  }

  get root (): SnapshotModel | null {
    return this.servedRoot
  }

  get chain (): ServedFiles | null {
    return this.files
  }

  get expectsChanges (): boolean {
    return this.changesExpected
  }

  /** Change files may come: each root from here on is made ready for them, the served one once first needed. */
  changesMayCome (): void {
    this.changesExpected = true
  }

  /** What the first change file would wait for, begun now (issue 57: a directory made after the start). */
  expectChanges (): void {
    if (this.changesExpected) return
    this.changesExpected = true
    if (this.servedRoot !== null && this.rootReady === null) this.setRoot(this.servedRoot)
  }

  /** The root, ready for change files: one loaded before they were expected is made ready now. */
  async readyRoot (): Promise<void> {
    if (this.changesExpected && this.rootReady === null && this.servedRoot !== null) this.setRoot(this.servedRoot)
    await this.rootReady
  }

  swap (model: SnapshotModel, root: SnapshotModel, files: ServedFiles): void {
    const old = this.served
    const oldRoot = this.servedRoot
    this.served = model
    this.files = files
    if (root !== oldRoot) {
      this.setRoot(root)
      // So the next start, rollback or pin of it reads instead of parsing.
      this.images?.write(root, files.snapshot.stamp)
    }
    this.letGo(old, oldRoot)
  }

  doubtRoot (): void {
    this.rootDoubted = true
  }

  /** Whether the next serve must read its snapshot again; asked once. */
  takeDoubt (): boolean {
    const doubted = this.rootDoubted
    this.rootDoubted = false
    return doubted
  }

  /** The same state under other names (a bad save put back serves again). */
  rename (files: ServedFiles): void {
    this.files = files
  }

  /** Its memory goes once no answer sends from it (ADR 011). Twice is harmless; the served ones are never let go. */
  letGo (...models: Array<SnapshotModel | null>): void {
    for (const model of models) {
      if (model !== null && model !== this.served && model !== this.servedRoot) model.memory.retire()
    }
  }

  private setRoot (model: SnapshotModel): void {
    this.servedRoot = model
    this.rootReady = null
    // Indexes no replica without change files needs.
    if (!this.changesExpected) return
    this.rootReady = prepareForChanges(model).catch((error: unknown) =>
      this.log.error({ err: error }, 'preparing the snapshot for change files failed'))
  }
}
