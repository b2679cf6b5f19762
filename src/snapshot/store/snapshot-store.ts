// Holds the served model (a snapshot and its change files, ADR 026), swapped in one assignment; reloads never overlap.
import { EventEmitter } from 'node:events'
import { basename } from 'node:path'
import { ImageError, SnapshotError } from '../../errors.js'
import type { LinkRule } from '../load/read-chunks.js'
import type { MemoryBudget } from '../memory-budget.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import type { ChangeSet } from '../changes/change-set.js'
import { deriveVersion } from '../model/derive-version.js'
import { JobQueue } from '../job-queue.js'
import { fileDigest, fileStamp } from './chain-on-disk.js'
import { planReload, type ReloadPlan, type ServedPart } from './plan-reload.js'
import type { ImageShelf } from '../images/image-shelf.js'
import type { StoreLogger } from './store-logger.js'
import { ReloadRecord, type ReloadStatus } from './reload-record.js'
import { ChainFileReader, type FileRead, type ReaderOptions } from './read-chain-file.js'
import { ServedState, type ChainFile } from './served-state.js'

export type { ReloadFailure } from './reload-record.js'

/**
 * `superseded`: the file changed while read; not a failure, it is read again. `no image`: a chain of `imageAlone`
 * whose image did not read (refused, or absent): its source fetches the snapshot (ADR 042).
 */
export type ReloadOutcome = 'loaded' | 'failed' | 'missing' | 'superseded' | 'no image'

/** A snapshot and its change files in apply order. */
export interface Chain {
  snapshot: string
  changes: readonly string[]
  /** The root is then made ready for change files (a changes directory, a manifest). */
  changesMayCome?: boolean
  /** Known for a kept copy or a download (never a stamp's guess): finds its version image, and the served snapshot. */
  snapshotDigest?: string
  /** The snapshot file is not here yet: served from its image (`snapshotDigest`) or not at all (ADR 042). */
  imageAlone?: boolean
}

export type { ChainFile } from './served-state.js'

interface Served extends ServedPart {
  snapshot: ChainFile
  files: ChainFile[]
}

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
  /** Holds no model: a promise resolved with one kept it alive for the process's life. */
  private first: Promise<void> | null = null
  private readonly reader: ChainFileReader
  private readonly log: StoreLogger
  private readonly firstChain: Chain
  private readonly jobs = new JobQueue()
  /** Counts, refusals, and the refused file not read again while unchanged. */
  readonly record: ReloadRecord
  readonly budget: MemoryBudget | null
  private readonly publish: ((model: SnapshotModel) => Promise<void>) | null
  /** Confirmations of images found by a stamp (ADR 042), stopped by `close`. */
  private readonly confirming = new AbortController()

  constructor (readonly file: string, options: StoreOptions = {}) {
    super()
    this.log = options.log ?? SILENT
    this.record = new ReloadRecord(this.log)
    this.reader = new ChainFileReader(this.record, this.log, options)
    this.budget = options.memory?.budget ?? null
    this.state = new ServedState(this.log, this.images)
    this.firstChain = options.first ?? { snapshot: file, changes: [] }
    this.publish = options.publish ?? null
  }

  /** Null when a test gives its own `load`. */
  get images (): ImageShelf | null {
    return this.reader.images
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
      const read = await this.readRoot(first)
      if (read === 'changed') continue
      if ('error' in read) throw read.error
      // Closed while it loaded (only close aborts confirmations): nothing is served or kept after a shutdown.
      if (this.confirming.signal.aborted) {
        read.model.memory.retire()
        return
      }
      const snapshot = { file: first.snapshot, stamp: read.stamp, digest: read.model.info.version }
      this.state.swap(read.model, read.model, { snapshot, changes: [] })
      break
    }
    // The snapshot is served first; a bad change file is then refused, not fatal.
    while (first.changes.length > 0 && await this.serveChain(first, Date.now()) === 'superseded');
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
    return this.jobs.run(async () => await this.runOnce(async started => await this.serveChain(chain, started)))
  }

  /** Runs until one is not superseded; one asked for during the first load runs after it. */
  private async runOnce (step: (started: number) => Promise<ReloadOutcome>): Promise<ReloadOutcome> {
    await this.first?.catch(() => {})
    for (;;) {
      const outcome = await step(Date.now())
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

  /** A chain's snapshot; an image found by the file's stamp alone is confirmed by its bytes later. */
  private async readRoot (chain: Chain): Promise<FileRead<SnapshotModel>> {
    const { snapshot, snapshotDigest, imageAlone } = chain
    const serving = this.state.model !== null
    const read = await this.reader.snapshot(snapshot, { serving, digest: snapshotDigest, imageAlone })
    if (read !== 'changed' && 'model' in read && snapshotDigest === undefined && read.model.info.fromImage !== undefined) {
      this.confirm(snapshot, read.stamp, read.model.info.version)
    }
    return read
  }

  /**
   * A stamp says a file is unchanged, not that its bytes are the image's (a file put back with its old time): they
   * are digested in the background, a piece per turn of the event loop, and read again if other (ADR 042).
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
    }).catch((error: unknown) => {
      if (!signal.aborted) this.log.warn({ snapshot: file, err: error }, 'the snapshot\'s digest could not be confirmed')
    })
  }

  private async serveChain (chain: Chain, started: number): Promise<ReloadOutcome> {
    if (chain.changes.length > 0 || chain.changesMayCome === true) this.state.changesMayCome()
    const servedChanges = this.state.chain?.changes.length ?? null
    // Not compared first: a digest of a whole snapshot the load reads again anyway (unless the source took it).
    const alone = chain.changes.length === 0 && servedChanges === 0 && chain.snapshotDigest === undefined
    const reread = this.state.takeDoubt()
    const served = alone || reread ? null : await this.servedPart(chain)
    const plan = planReload(chain.changes.length, servedChanges, served)
    return await this.execute(plan, chain, served, started)
  }

  private async execute (
    plan: ReloadPlan, chain: Chain, served: Served | null, started: number
  ): Promise<ReloadOutcome> {
    const current = this.state
    let root = current.root
    // Recorded only once served: a failed serve would leave it naming kept files a prune may remove.
    let snapshot = served?.snapshot
    const files: ChainFile[] = plan.eachServed ? [...(served as Served).files] : []
    let state: SnapshotModel
    if (plan.base === 'read') {
      const read = await this.readRoot(chain)
      if (read === 'changed') return 'superseded'
      // Not a refusal: the source fetches the snapshot.
      if ('error' in read && chain.imageAlone === true && read.error instanceof ImageError) return 'no image'
      if ('error' in read) return this.refuse(chain.snapshot, read.error, 'snapshot')
      root = read.model
      snapshot = { file: chain.snapshot, stamp: read.stamp, digest: root.info.version }
      state = root
    } else {
      await current.readyRoot()
      state = plan.base === 'served' ? current.model as SnapshotModel : root as SnapshotModel
    }
    let outcome: ReloadOutcome = 'loaded'
    for (let at = plan.from; at < chain.changes.length; at++) {
      const file = chain.changes[at] as string
      const read = repeatedId(await this.reader.changes(file, current.model !== null), state, file)
      if (read === 'changed') {
        current.letGo(state, root)
        return 'superseded'
      }
      if ('error' in read) {
        outcome = this.refuse(file, read.error, 'change file')
        if (plan.keepServedIfRefused[at] === true) {
          current.letGo(state, root)
          return outcome
        }
        break
      }
      const next = await deriveVersion(state, read.model)
      this.record.applied()
      this.appliedLog(next, file, started)
      files.push({ file, stamp: read.stamp, digest: read.model.digest })
      if (plan.eachServed) {
        current.swap(next, current.root as SnapshotModel, { snapshot: snapshot as ChainFile, changes: [...files] })
        this.record.succeeded()
      } else if (state !== root) {
        current.letGo(state)
      }
      state = next
    }
    if (plan.eachServed) {
      // Nothing new: the same state under `chain`'s names (a bad save put back serves again).
      if (plan.from === chain.changes.length) {
        current.rename({ snapshot: snapshot as ChainFile, changes: files })
        if (outcome === 'loaded' && this.record.failing) this.record.succeeded()
      }
      return outcome
    }
    current.swap(state, root as SnapshotModel, { snapshot: snapshot as ChainFile, changes: files })
    if (outcome === 'loaded') this.record.succeeded()
    this.log.info({
      snapshot: chain.snapshot,
      changes: files.map(file => file.file),
      version: state.info.version,
      generatedAt: state.info.generatedAt,
      items: state.itemCounts(),
      ms: Date.now() - started
    }, plan.base === 'read'
      ? 'snapshot reloaded'
      : files.length === 0
        ? 'the snapshot served again from the one loaded'
        : 'change files applied again from the snapshot')
    return outcome
  }

  /** Null when its snapshot is not the served one (by the digest its source took, else by stamp, then digest). */
  private async servedPart (chain: Chain): Promise<Served | null> {
    const served = this.state.chain
    if (served === null || this.state.root === null) return null
    const { snapshotDigest } = chain
    const known = snapshotDigest !== undefined
    const snapshot = !known
      ? await asServed(served.snapshot, chain.snapshot)
      : snapshotDigest === served.snapshot.digest
        ? { file: chain.snapshot, stamp: await fileStamp(chain.snapshot), digest: snapshotDigest }
        : null
    if (snapshot === null) return null
    const files: ChainFile[] = []
    for (let n = 0; n < served.changes.length && n < chain.changes.length; n++) {
      const same = await asServed(served.changes[n] as ChainFile, chain.changes[n] as string, 'within-directory')
      if (same === null) break
      files.push(same)
    }
    // After a pin or rollback the served files are kept copies: compared by bytes.
    const laterApplied: boolean[] = []
    for (const file of chain.changes.slice(files.length)) {
      let applied = false
      for (const read of served.changes) {
        if (!applied && await asServed(read, file, 'within-directory') !== null) applied = true
      }
      laterApplied.push(applied)
    }
    const pathApplied = chain.changes.map(file => served.changes.some(read => read.file === file))
    return { snapshot, files, changes: files.length, laterApplied, pathApplied, known }
  }

  private appliedLog (model: SnapshotModel, file: string, started: number): void {
    const applied = model.info.changes?.at(-1)
    this.log.info({
      changes: file,
      version: model.info.version,
      upserts: applied?.upserts,
      deletes: applied?.deletes,
      absentDeletes: applied?.absentDeletes,
      garbageBytes: model.garbageBytes,
      ms: Date.now() - started
    }, 'change file applied')
  }

  /** What the first change file would wait for, begun now (issue 57: a directory made after the start). */
  expectChanges (): void {
    this.state.expectChanges()
  }

  private refuse (file: string, error: unknown, what: 'snapshot' | 'change file'): ReloadOutcome {
    return this.record.refuse(file, error, what, this.state.model !== null)
  }
}

/** `read` (or a copy with `file`'s stamp) when unchanged or the same bytes, else null. */
async function asServed (read: ChainFile, file: string, links: LinkRule = 'follow'): Promise<ChainFile | null> {
  const stamp = await fileStamp(file)
  if (stamp === null) return null
  if (file === read.file && stamp === read.stamp) return read
  // Another size: no digest of a file the load reads whole anyway.
  if (read.stamp !== null && sizeOf(stamp) !== sizeOf(read.stamp)) return null
  const same = await fileDigest(file, links).then((digest: string) => digest === read.digest, () => false)
  return same ? { file, stamp, digest: read.digest } : null
}

type ChangesRead = FileRead<ChangeSet>

/** A repeated id is a bad file: it ends the version's name, which pins and rollbacks go by. */
function repeatedId (read: ChangesRead, state: SnapshotModel, file: string): ChangesRead {
  if (read === 'changed' || 'error' in read) return read
  const { id } = read.model
  const before = state.info.changes?.find(change => change.id === id)
  if (before === undefined) return read
  const problem = `${basename(file)}:1: id: "${id}" is already the id of ${basename(before.source)}, applied before it`
  return { error: new SnapshotError('SNAPSHOT_ERR_INVALID', file, [`${problem}: each change file needs one of its own`]) }
}

/** A fileStamp's third field. */
function sizeOf (stamp: string): string | null {
  return stamp.split(':')[2] ?? null
}
