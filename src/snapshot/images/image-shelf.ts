// STATE_DIR/images: one version image per loaded snapshot kept, named by its digest (ADR 033). Written in the
// background once a parsed snapshot is served; read instead of a parse when a snapshot's content is an image's:
// the same file unchanged (its stamp), or a kept copy whose digest the kept version knows.
import { open, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { ImageError, TooBigError } from '../../errors.js'
import { makeDirectory } from '../../make-directory.js'
import { isAlive } from '../../write-through-temporary.js'
import { JobQueue } from '../job-queue.js'
import type { MemoryGuard } from '../memory-budget.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import type { StoreLogger } from '../store/snapshot-store.js'
import { readImage, readImageHeader, writeImage } from './version-image.js'

const SUFFIX = '.image'

/** Images read, written and refused since start (/-/status, metrics). */
interface ImageCounts {
  read: number
  written: number
  refused: number
}

/** Which snapshot to find an image of: its file's stamp now, and its digest when known (a kept copy). */
export interface ImageWanted {
  stamp: string | null
  digest?: string | undefined
}

export class ImageShelf {
  private readonly jobs = new JobQueue()
  /** Aborted at shutdown: a write under way stops between two pieces, rather than hold the exit for gigabytes. */
  private readonly stopping = new AbortController()
  private readonly counts: ImageCounts = { read: 0, written: 0, refused: 0 }

  constructor (
    readonly dir: string,
    private readonly log: StoreLogger,
    private readonly guard: MemoryGuard | null = null
  ) {}

  status (): ImageCounts {
    return { ...this.counts }
  }

  private pathOf (version: string): string {
    return join(this.dir, `${version}${SUFFIX}`)
  }

  /**
   * The model of `file` read from an image of the same content, or null: none here, or one refused (logged,
   * counted, removed), so the file is parsed. A TooBigError is the memory budget's: the file would not fit either.
   */
  async read (file: string, wanted: ImageWanted): Promise<SnapshotModel | null> {
    const candidates = wanted.digest !== undefined ? [this.pathOf(wanted.digest)] : await this.images()
    for (const path of candidates) {
      const started = Date.now()
      const handle = await open(path, 'r').catch(() => null)
      if (handle === null) continue
      try {
        const header = await readImageHeader(handle)
        const same = wanted.digest !== undefined
          ? header.made.version === wanted.digest
          : wanted.stamp !== null && header.made.stamp === wanted.stamp
        if (!same) continue
        await this.guard?.admit(file, header.bytes, 'image')
        const model = await readImage(handle, header, file)
        const ms = Date.now() - started
        model.info.fromImage = { ms }
        this.counts.read++
        this.log.info({ snapshot: file, version: header.made.version, ms }, 'snapshot read from its version image')
        return model
      } catch (error) {
        if (error instanceof TooBigError) throw error
        this.refuse(path, error)
      } finally {
        await handle.close()
      }
    }
    return null
  }

  private refuse (path: string, error: unknown): void {
    this.counts.refused++
    const problem = error instanceof ImageError ? error.message : `it does not read (${(error as Error).message})`
    this.log.warn({ image: path, problem }, 'a version image was refused and removed: the snapshot is parsed instead')
    rm(path, { force: true }).catch(() => {})
  }

  /** Whether the image of the snapshot whose digest is `digest` is here (it is checked when read). */
  async has (digest: string): Promise<boolean> {
    return (await stat(this.pathOf(digest)).catch(() => null))?.isFile() === true
  }

  /**
   * Takes in an image made elsewhere (a fleet's publisher) as the one of the snapshot whose digest is `digest`:
   * `fetch` writes it to a temporary file, kept only when its header reads and names that snapshot. Rejects with
   * an ImageError (or `fetch`'s error), leaving nothing behind.
   */
  receive (digest: string, fetch: (file: string) => Promise<void>): Promise<void> {
    // A job, as a write is: a sweep of this process's temporary files never runs beside it.
    return this.jobs.run(async () => {
      // Written here meanwhile (the parse of the same snapshot), or a stop asked for while it waited.
      if (await this.has(digest)) return
      this.stopping.signal.throwIfAborted()
      await makeDirectory(this.dir)
      const temporary = join(this.dir, `.${digest}.${process.pid}.tmp`)
      try {
        await fetch(temporary)
        const handle = await open(temporary, 'r')
        try {
          const { made } = await readImageHeader(handle)
          if (made.version !== digest) throw new ImageError(`it is the image of another snapshot (${made.version})`)
        } finally {
          await handle.close()
        }
        await rename(temporary, this.pathOf(digest))
      } finally {
        await rm(temporary, { force: true })
      }
    })
  }

  /** The images here, in no order: few are kept (KEEP_VERSIONS). */
  private async images (): Promise<string[]> {
    const entries = await readdir(this.dir).catch(() => [])
    return entries.filter(name => name.endsWith(SUFFIX) && !name.startsWith('.')).map(name => join(this.dir, name))
  }

  /**
   * Writes `model`'s image in the background, after any other, through a hidden temporary name renamed once it is
   * on the disk: a crash mid-write leaves no image that is read. Never rejects (a failed write is logged).
   */
  write (model: SnapshotModel, stamp: string | null): void {
    if (model.info.changes !== undefined || model.info.fromImage !== undefined) return
    const { version } = model.info
    this.jobs.run(async () => {
      const path = this.pathOf(version)
      // Let go while it waited (a newer version served): its chunks may be gone, and it is no longer wanted.
      try {
        model.memory.check()
      } catch {
        return
      }
      if (await this.madeFrom(path) === stamp) return
      await makeDirectory(this.dir)
      const temporary = join(this.dir, `.${version}.${process.pid}.tmp`)
      const started = Date.now()
      try {
        const bytes = await writeImage(temporary, model, stamp, this.stopping.signal)
        await rename(temporary, path)
        this.counts.written++
        this.log.info({ version, bytes, ms: Date.now() - started }, 'version image written')
      } catch (error) {
        await rm(temporary, { force: true })
        throw error
      }
    }).catch((error: unknown) => {
      if (this.stopping.signal.aborted) this.log.info({ version }, 'the version image is not written: the service stops')
      else this.log.warn({ version, err: error }, 'the version image could not be written')
    })
  }

  /** The stamp an image was made from; undefined when there is none that reads. */
  private async madeFrom (path: string): Promise<string | null | undefined> {
    const handle = await open(path, 'r').catch(() => null)
    if (handle === null) return undefined
    try {
      return (await readImageHeader(handle)).made.stamp
    } catch {
      return undefined
    } finally {
      await handle.close()
    }
  }

  /** Removes the images of snapshots no kept version holds, and temporary files of processes gone. */
  keepOnly (versions: ReadonlySet<string>): Promise<void> {
    return this.jobs.run(async () => {
      for (const name of await readdir(this.dir).catch(() => [])) {
        const pid = /^\..*\.(\d+)\.tmp$/.exec(name)?.[1]
        // This process's own are left from a process before it under the same pid (a container's 1): no write runs
        // beside this job.
        const gone = pid !== undefined
          ? Number(pid) === process.pid || !isAlive(Number(pid))
          : name.endsWith(SUFFIX) && !versions.has(name.slice(0, -SUFFIX.length))
        if (gone) await rm(join(this.dir, name), { force: true })
      }
    })
  }

  /** Resolves once every write asked for so far has ended (tests). */
  async idle (): Promise<void> {
    await this.jobs.idle()
  }

  /** Shutdown: a write under way stops (its temporary file removed), those waiting do not start. */
  async close (): Promise<void> {
    this.stopping.abort()
    await this.jobs.idle()
  }
}
