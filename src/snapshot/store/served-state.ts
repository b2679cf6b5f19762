// What the store serves: the model, the root of its chain (made ready for change files once they may come, ADR 026),
// and the chain's files; swapped in one assignment, and the one place a version is let go (ADR 030).
import type { ImageShelf } from '../images/image-shelf.js'
import { prepareForChanges } from '../model/derive-version.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import type { StoreLogger } from './store-logger.js'

export interface ChainFile {
  readonly file: string
  readonly stamp: string | null
  readonly digest: string
}

export interface ServedFiles {
  snapshot: ChainFile
  changes: ChainFile[]
}

export class ServedState {
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
