// STATE_DIR/images: one version image per kept loaded snapshot, named by its digest, read instead of a parse when the
// content is the same (ADR 033).
import { open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ImageError, TooBigError } from '../../errors.js'
import { makeDirectory } from '../../make-directory.js'
import { OWNER_DIRECTORY, OWNER_FILE } from '../../owner-only.js'
import { isAlive } from '../../write-through-temporary.js'
import { JobQueue } from '../job-queue.js'
import type { MemoryGuard } from '../memory-budget.js'
import { collected, collectNow } from '../model/item-memory.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import type { View } from '../model/version-arrays.js'
import type { StoreLogger } from '../store/store-logger.js'
import { ImageAssembly } from './image-assembly.js'
import { FINGERPRINT } from './image-fingerprint.js'
import { allocate, readImage, readImageHeader, writeImage } from './version-image.js'

const SUFFIX = '.image'
/** Names the image served with no snapshot file yet (a fleet's join, ADR 042): no prune removes it. */
const ALONE = 'alone'

/** Since start (/-/status, metrics). */
interface ImageCounts {
  read: number
  written: number
  refused: number
}

/** `digest`: when known (a kept copy). */
export interface ImageWanted {
  stamp: string | null
  digest?: string | undefined
}

export class ImageShelf {
  private readonly jobs = new JobQueue()
  /** A write under way stops between two pieces rather than hold the exit for gigabytes. */
  private readonly stopping = new AbortController()
  private readonly counts: ImageCounts = { read: 0, written: 0, refused: 0 }
  /** Images received and put together as they downloaded, by digest, until the read that follows takes them. */
  private readonly assembled = new Map<string, ImageAssembly>()

  constructor (
    readonly dir: string,
    private readonly log: StoreLogger,
    private readonly guard: MemoryGuard | null = null,
    /** What this code's images are made by (tests give another: code that renders otherwise). */
    readonly fingerprint = FINGERPRINT
  ) {}

  status (): ImageCounts {
    return { ...this.counts }
  }

  private pathOf (version: string): string {
    return join(this.dir, `${version}${SUFFIX}`)
  }

  /**
   * Null: none, or one refused, removed before the caller parses, its arrays given back (ADR 042). A TooBigError
   * stands: the file would not fit either.
   */
  async read (file: string, wanted: ImageWanted): Promise<SnapshotModel | null> {
    const assembly = wanted.digest === undefined ? undefined : this.assembled.get(wanted.digest)
    if (assembly !== undefined) return this.finish(assembly, file, wanted.digest as string)
    const candidates = wanted.digest !== undefined ? [this.pathOf(wanted.digest)] : await this.images()
    for (const path of candidates) {
      const started = Date.now()
      const handle = await open(path, 'r').catch(() => null)
      if (handle === null) continue
      // Until served: a read refused gives them back before the caller parses.
      let arrays: View[] | null = null
      try {
        const header = await readImageHeader(handle, this.fingerprint)
        const same = wanted.digest !== undefined
          ? header.made.version === wanted.digest
          : wanted.stamp !== null && header.made.stamp === wanted.stamp
        if (!same) continue
        await this.guard?.admit(file, header.bytes, 'image')
        arrays = allocate(header)
        const model = await readImage(handle, header, file, arrays)
        arrays = null
        const ms = Date.now() - started
        model.info.fromImage = { ms }
        this.counts.read++
        this.log.info({ snapshot: file, version: header.made.version, ms }, 'snapshot read from its version image')
        return model
      } catch (error) {
        if (error instanceof TooBigError) throw error
        await this.refuse(path, error)
      } finally {
        await handle.close()
      }
      // Once the file is closed: shared memory V8 does not count, which the parse's memory budget would find
      // still in RSS (ADR 011); a collection at once missed them in 3 runs of 10.
      if (arrays !== null) {
        const buffers = arrays.map(view => view.buffer)
        arrays = null
        await collected(buffers)
      }
    }
    return null
  }

  /** Read as it downloaded: the version, its indexes checked. */
  private async finish (assembly: ImageAssembly, file: string, digest: string): Promise<SnapshotModel | null> {
    this.assembled.delete(digest)
    const started = Date.now()
    try {
      const model = assembly.finish(file)
      const ms = Date.now() - started
      model.info.fromImage = { ms }
      this.counts.read++
      this.log.info({ snapshot: file, version: digest, ms }, 'snapshot read from its version image, put together as it downloaded')
      return model
    } catch (error) {
      await this.refuse(this.pathOf(digest), error)
      collectNow()
      return null
    }
  }

  private async refuse (path: string, error: unknown): Promise<void> {
    this.counts.refused++
    const problem = error instanceof ImageError ? error.message : `it does not read (${(error as Error).message})`
    this.log.warn({ image: path, problem }, 'a version image was refused and removed: the snapshot is parsed instead')
    await rm(path, { force: true }).catch(() => {})
  }

  /** Checked only when read. */
  async has (digest: string): Promise<boolean> {
    return (await stat(this.pathOf(digest)).catch(() => null))?.isFile() === true
  }

  /**
   * An image made elsewhere (a fleet's publisher), downloaded by `fetch` into `file` and fed to memory as it comes
   * (`feed`), its memory admitted once its header says how much; kept only when its header names `digest` and this
   * code's fingerprint, and `fetch` resolves only once the file is the bytes a manifest's SHA-256 names. The next
   * read of `digest` takes the version put together; nothing is left behind if it fails (ADR 042).
   */
  receive (
    digest: string, bytes: number,
    fetch: (file: string, feed: (chunk: Uint8Array) => Promise<void> | undefined) => Promise<void>
  ): Promise<void> {
    // A job: a sweep of this process's temporary files never runs beside it.
    return this.jobs.run(async () => {
      // Written here meanwhile (the same snapshot parsed), or a stop asked for while it waited.
      if (await this.has(digest)) return
      this.stopping.signal.throwIfAborted()
      await makeDirectory(this.dir, OWNER_DIRECTORY)
      const temporary = join(this.dir, `.${digest}.${process.pid}.tmp`)
      const assembly = new ImageAssembly(bytes, this.fingerprint, async header => {
        if (header.made.version !== digest) throw new ImageError(`it is the image of another snapshot (${header.made.version})`)
        await this.guard?.admit(this.pathOf(digest), header.bytes, 'image')
      })
      try {
        await fetch(temporary, chunk => assembly.feed(chunk))
        await rename(temporary, this.pathOf(digest))
        this.assembled.set(digest, assembly)
      } finally {
        await rm(temporary, { force: true })
      }
    })
  }

  /** The version put together from a received image is not wanted now (a pin came): its file stays. */
  release (digest: string): void {
    this.assembled.delete(digest)
  }

  /** A received image whose snapshot was not served after all (a refused manifest's). */
  discard (digest: string): Promise<void> {
    this.assembled.delete(digest)
    return this.jobs.run(async () => { await rm(this.pathOf(digest), { force: true }) })
  }

  /** Few are kept (KEEP_VERSIONS). */
  private async images (): Promise<string[]> {
    const entries = await readdir(this.dir).catch(() => [])
    return entries.filter(name => name.endsWith(SUFFIX) && !name.startsWith('.')).map(name => join(this.dir, name))
  }

  /** In the background, through a temporary name: a crash mid-write leaves no image that is read. Never rejects. */
  write (model: SnapshotModel, stamp: string | null): void {
    if (model.info.changes !== undefined || model.info.fromImage !== undefined) return
    const { version } = model.info
    this.jobs.run(async () => {
      // Asked for by a reload that ended after the close began: nothing is written after close.
      this.stopping.signal.throwIfAborted()
      const path = this.pathOf(version)
      // Let go while it waited: its chunks may be gone, and it is no longer wanted.
      try {
        model.memory.check()
      } catch {
        return
      }
      if (await this.madeFrom(path) === stamp) return
      this.stopping.signal.throwIfAborted()
      await makeDirectory(this.dir, OWNER_DIRECTORY)
      const temporary = join(this.dir, `.${version}.${process.pid}.tmp`)
      const started = Date.now()
      try {
        const bytes = await writeImage(temporary, model, stamp, {
          signal: this.stopping.signal, mode: OWNER_FILE, fingerprint: this.fingerprint
        })
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

  /** Undefined: no image that reads. */
  private async madeFrom (path: string): Promise<string | null | undefined> {
    const handle = await open(path, 'r').catch(() => null)
    if (handle === null) return undefined
    try {
      return (await readImageHeader(handle, this.fingerprint)).made.stamp
    } catch {
      return undefined
    } finally {
      await handle.close()
    }
  }

  /** The image served alone kept too, and one received and not read yet. */
  keepOnly (versions: ReadonlySet<string>): Promise<void> {
    return this.jobs.run(async () => {
      const alone = await this.alone()
      const spared = (version: string): boolean =>
        versions.has(version) || version === alone || this.assembled.has(version)
      for (const name of await readdir(this.dir).catch(() => [])) {
        const pid = /^\..*\.(\d+)\.tmp$/.exec(name)?.[1]
        const version = name.slice(0, -SUFFIX.length)
        // Our own pid's are left from a process before (a container's 1): no write runs beside this job.
        const gone = pid !== undefined
          ? Number(pid) === process.pid || !isAlive(Number(pid))
          : name.endsWith(SUFFIX) && !spared(version)
        if (gone) await rm(join(this.dir, name), { force: true })
      }
    })
  }

  /**
   * The snapshot whose image is served without its file (null: none any more), remembered across a restart: its
   * image is then the only copy of the version here (ADR 042).
   */
  async holdAlone (digest: string | null): Promise<void> {
    // Not a job: it would wait behind an image being written. A prune meanwhile spares it as received (`keepOnly`).
    // Nothing is written after close.
    if (this.stopping.signal.aborted) return
    if (digest === null) {
      await rm(join(this.dir, ALONE), { force: true })
      return
    }
    await makeDirectory(this.dir, OWNER_DIRECTORY)
    // Written in place: a temporary name would be a sweep's to remove, and a name cut short spares nothing.
    await writeFile(join(this.dir, ALONE), digest, { mode: OWNER_FILE })
  }

  private async alone (): Promise<string | null> {
    return await readFile(join(this.dir, ALONE), 'utf8').catch(() => null)
  }

  /** Tests. */
  async idle (): Promise<void> {
    await this.jobs.idle()
  }

  /** A write under way stops; those waiting do not start. */
  async close (): Promise<void> {
    this.stopping.abort()
    await this.jobs.idle()
  }
}
