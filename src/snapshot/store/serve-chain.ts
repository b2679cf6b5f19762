// A chain served: each file known by its stamp and digest, compared with what is served, planned before anything is
// read (`planReload`), then carried out as one loop: the snapshot read (its stamp before and after) or the served root
// reused, each change file read and applied (ADR 030).
import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { ImageError, SnapshotError } from '../../errors.js'
import { DIGEST_BEHIND_FROM_BYTES, DigestBehind } from '../../sources/digest-behind.js'
import type { ChangeSet } from '../changes/change-set.js'
import { readChangeFile } from '../changes/read-change-file.js'
import type { ImageShelf, ImageWanted } from '../images/image-shelf.js'
import { SnapshotLoader } from '../load/load-snapshot.js'
import { FileChunks, VERSION_DIGEST, type LinkRule } from '../load/read-chunks.js'
import type { MemoryBudget, MemoryGuard } from '../memory-budget.js'
import { deriveVersion } from '../model/derive-version.js'
import { collectSoon } from '../model/item-memory.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import { isMissing, type ReloadRecord } from './reload-record.js'
import type { StoreLogger } from './store-logger.js'

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

export interface ChainFile {
  readonly file: string
  readonly stamp: string | null
  readonly digest: string
}

export interface ServedFiles {
  snapshot: ChainFile
  changes: ChainFile[]
}

/** The store's served state (`ServedState` in snapshot-store.ts), as the executor reads and swaps it. */
export interface ServedChainState {
  readonly model: SnapshotModel | null
  readonly root: SnapshotModel | null
  readonly chain: ServedFiles | null
  changesMayCome: () => void
  takeDoubt: () => boolean
  readyRoot: () => Promise<void>
  swap: (model: SnapshotModel, root: SnapshotModel, files: ServedFiles) => void
  rename: (files: ServedFiles) => void
  letGo: (...models: Array<SnapshotModel | null>) => void
}

interface Served extends ServedPart {
  snapshot: ChainFile
  files: ChainFile[]
}

export interface ExecutorParts {
  state: ServedChainState
  reader: ChainFileReader
  record: ReloadRecord
  log: StoreLogger
}

export class ChainExecutor {
  private readonly state: ServedChainState
  private readonly reader: ChainFileReader
  private readonly record: ReloadRecord
  private readonly log: StoreLogger

  constructor ({ state, reader, record, log }: ExecutorParts) {
    this.state = state
    this.reader = reader
    this.record = record
    this.log = log
  }

  async serve (chain: Chain, started: number): Promise<ReloadOutcome> {
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
      const read = await this.reader.root(chain, current.model !== null)
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

// How each file of a chain is read: the stamp before and after ('changed' when it was written meanwhile), a failed
// read given time to settle, and a file refused as it is not read again (reload-record.ts).

/** `serving`: leave a core to requests (ADR 008). `imageAlone`: never a parse. */
export interface ReadOptions extends ImageWanted {
  serving: boolean
  imageAlone?: boolean
}

export interface ReaderOptions {
  /** For tests; no image is then read. */
  load?: (file: string, options: ReadOptions) => Promise<SnapshotModel>
  readChanges?: (file: string, options: { serving: boolean }) => Promise<ChangeSet>
  memory?: MemoryGuard
  /** A failed load waits this long before checking whether the file was still being written. */
  settleMs?: number
  images?: ImageShelf | null
}

export type FileRead<T> = { model: T, stamp: string | null } | { error: unknown } | 'changed'

export class ChainFileReader {
  /** Null when a test gives its own `load`. */
  readonly images: ImageShelf | null
  readonly budget: MemoryBudget | null
  private readonly load: (file: string, options: ReadOptions) => Promise<SnapshotModel>
  private readonly readChanges: (file: string, options: { serving: boolean }) => Promise<ChangeSet>
  private readonly settleMs: number

  constructor (private readonly record: ReloadRecord, private readonly log: StoreLogger, options: ReaderOptions) {
    const loader = new SnapshotLoader({ log, memory: options.memory ?? null })
    const images = options.load === undefined ? options.images ?? null : null
    this.images = images
    this.budget = options.memory?.budget ?? null
    this.load = options.load ?? (async (file, read) => await images?.read(file, read) ??
      (read.imageAlone === true ? noImage(file) : await loader.load(file, read)))
    // The same loader, so the memory budget holds for change files too.
    this.readChanges = options.readChanges ??
      (async (file, readOptions) => await readChangeFile(file, { ...readOptions, loader, links: 'within-directory' }))
    this.settleMs = options.settleMs ?? 0
  }

  /** A chain's snapshot, by its image where there is one (found by `snapshotDigest`, else by the file's stamp). */
  async root ({ snapshot, snapshotDigest, imageAlone }: Chain, serving: boolean): Promise<FileRead<SnapshotModel>> {
    return await this.once(snapshot, this.load, { serving, digest: snapshotDigest, imageAlone })
  }

  async changes (file: string, serving: boolean): Promise<FileRead<ChangeSet>> {
    return await this.once(file, this.readChanges, { serving })
  }

  /**
   * 'changed' when written meanwhile: what was read may be a valid beginning (JSON Lines cut at a line end) or a
   * truncated save.
   */
  private async once<T extends SnapshotModel | ChangeSet> (
    file: string, reader: (file: string, options: ReadOptions) => Promise<T>, options: Omit<ReadOptions, 'stamp'>
  ): Promise<FileRead<T>> {
    const before = await fileStamp(file)
    const refused = this.record.refusedBefore(file, before)
    if (refused !== null) return { error: refused }
    let read: { model: T, stamp: string | null } | { error: unknown }
    try {
      read = { model: await reader(file, { ...options, stamp: before }), stamp: before }
    } catch (error) {
      // Shared memory V8 does not count (ADR 012).
      collectSoon()
      // Editors delete before they recreate: nothing to wait for.
      if (isMissing(error)) return { error }
      if (this.settleMs > 0) await delay(this.settleMs)
      read = { error }
    }
    if (before === await fileStamp(file)) {
      if ('error' in read) this.record.readFailed(file, before, read.error)
      return read
    }
    this.log.warn({ snapshot: file }, 'snapshot file changed while it was read; loading it again')
    // Neither served nor anyone's root yet.
    if ('model' in read && 'memory' in read.model) read.model.memory.retire()
    return 'changed'
  }
}

function noImage (file: string): never {
  throw new ImageError(`${basename(file)} is not here and no image of it reads`)
}

// Whether a file is the one seen before: its stamp (cheap, may say unchanged of other bytes) and its digest.

/**
 * As a load computes it (a snapshot's version; a change set's digest). A large file's on a thread of its own: hashed
 * on the event loop, a 1.4 GB snapshot's pieces held the pages back for seconds after a restart from its image.
 * `background`: that thread below the ones that answer requests, stopped when it is aborted.
 */
export async function fileDigest (file: string, links: LinkRule = 'follow', background?: AbortSignal): Promise<string> {
  const chunks = await FileChunks.open(file, links)
  try {
    if (chunks.size >= DIGEST_BEHIND_FROM_BYTES) return await digestBehind(file, chunks, background)
    const buffer = Buffer.allocUnsafe(1024 * 1024)
    while (await chunks.readInto(buffer, 0, buffer.length) > 0) background?.throwIfAborted()
    return chunks.digest()
  } finally {
    await chunks.close()
  }
}

/** The file `chunks` opened and checked, read by its descriptor: no path is opened again. */
async function digestBehind (file: string, chunks: FileChunks, background?: AbortSignal): Promise<string> {
  background?.throwIfAborted()
  const thread = new DigestBehind({
    file, fd: chunks.fd, algorithm: VERSION_DIGEST, encoding: 'base64url', lowPriority: background !== undefined
  })
  const stop = (): void => { thread.stop().catch(() => {}) }
  background?.addEventListener('abort', stop, { once: true })
  try {
    return await thread.end(chunks.size)
  } finally {
    background?.removeEventListener('abort', stop)
  }
}

/** Null when it cannot be read. */
export async function fileStamp (file: string): Promise<string | null> {
  try {
    const s = await stat(file, { bigint: true })
    // A pipe or a device has no versions to tell apart.
    if (!s.isFile()) return 'not a regular file'
    // Not the ctime: hard-linking a kept download changes it (ADR 025).
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`
  } catch {
    return null
  }
}

// What a reload does, decided from what is served and what is wanted.

export interface ServedPart {
  /** The wanted chain's first `changes` change files are the served state's first. */
  changes: number
  /** From the `changes`-th on: the served state applied the same bytes (a kept copy). */
  laterApplied: readonly boolean[]
  /** The served state applied a file at that path (its bytes may have changed since). */
  pathApplied: readonly boolean[]
  /** The wanted snapshot is the served one by a digest its source took (a download, a kept copy): never read again. */
  known?: boolean
}

export interface ReloadPlan {
  base: 'read' | 'served' | 'root'
  from: number
  /** Each version served as it is made; else only the last, at once. */
  eachServed: boolean
  /** True when serving the chain short of that file would take back a change file served now. */
  keepServedIfRefused: readonly boolean[]
}

/**
 * A snapshot alone where one alone is served is read again, even unchanged: a SIGHUP reloads whatever it finds; not one
 * its source knows by digest to be the served one (ADR 042).
 */
export function planReload (wanted: number, servedChanges: number | null, part: ServedPart | null): ReloadPlan {
  if (servedChanges === null || part === null || (wanted === 0 && servedChanges === 0 && part.known !== true)) {
    return { base: 'read', from: 0, eachServed: false, keepServedIfRefused: new Array<boolean>(wanted).fill(false) }
  }
  const applied = (p: number): boolean => p < part.changes || part.laterApplied[p - part.changes] === true
  const keepServedIfRefused = Array.from({ length: wanted }, (_, p) => {
    if (part.pathApplied[p] === true) return true
    for (let later = p + 1; later < wanted; later++) if (applied(later)) return true
    return false
  })
  return part.changes === servedChanges
    ? { base: 'served', from: part.changes, eachServed: true, keepServedIfRefused }
    : { base: 'root', from: 0, eachServed: false, keepServedIfRefused }
}
