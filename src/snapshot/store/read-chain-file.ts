// A chain's files as the store reads them: the file's stamp before and after ('changed' when it was written
// meanwhile), a failed read given time to settle, and a file refused as it is not read again (reload-record.ts).
import { basename } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { ImageError } from '../../errors.js'
import type { ChangeSet } from '../changes/change-set.js'
import { readChangeFile } from '../changes/read-change-file.js'
import type { ImageShelf, ImageWanted } from '../images/image-shelf.js'
import { SnapshotLoader } from '../load/load-snapshot.js'
import type { MemoryBudget, MemoryGuard } from '../memory-budget.js'
import { collectSoon } from '../model/item-memory.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import { fileStamp } from './file-identity.js'
import { isMissing, type ReloadRecord } from './reload-record.js'
import type { StoreLogger } from './store-logger.js'

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

  async snapshot (file: string, options: Omit<ReadOptions, 'stamp'>): Promise<FileRead<SnapshotModel>> {
    return await this.once(file, this.load, options)
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
