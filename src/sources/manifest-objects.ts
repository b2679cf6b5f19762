// One manifest URL's objects folder: each object downloaded once under its name (within its update's budget, digested
// when asked), what a refused update downloaded removed, the last two manifests' objects kept, dead downloads swept.
import { readdir, rename, rm, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { SourceError } from '../errors.js'
import type { StoreLogger } from '../snapshot/store/store-logger.js'
import { sweepDeadDownloads } from '../write-through-temporary.js'
import {
  downloadObject, type DigestKind, type DownloadBudget, type DownloadLimit, type DownloadOptions
} from './download-object.js'
import { refuseTooLarge } from './follow-source.js'
import type { RemoteSource } from './remote-source.js'

/** One manifest's downloads: a budget, and what they put on disk, removed if the manifest is refused (ADR 040). */
export interface Update {
  signal: AbortSignal
  budget: DownloadBudget
  objects: string[]
  /** The digest of an image received. */
  image: string | null
}

export class ManifestObjects {
  /** Name → the snapshot's digest, taken as it downloaded (or recorded then): finds its image. */
  readonly digests = new Map<string, string>()

  constructor (readonly dir: string, private readonly source: RemoteSource, private readonly log: StoreLogger) {}

  pathOf (name: string): string {
    return join(this.dir, name)
  }

  async has (name: string): Promise<boolean> {
    return await isFile(this.pathOf(name))
  }

  /** `digest`: a snapshot's version, taken as it streams. `lowPriority`: a download in the background. */
  async download (name: string, update: Update, digest: boolean, lowPriority = false): Promise<string> {
    const file = this.pathOf(name)
    // Hidden and per process: never an object's name, and replicas may share the directory.
    const temporary = join(this.dir, `.${name}.download-${process.pid}`)
    try {
      const kind = digest ? 'version' : null
      const { digest: hash } = await this.fetchTo(name, temporary, update, { digest: kind, lowPriority })
      await rename(temporary, file)
      update.objects.push(file)
      if (hash !== null) this.digests.set(name, hash)
      return file
    } finally {
      await rm(temporary, { force: true })
    }
  }

  /** Into `file`, whoever names it (an image goes to the shelf). `bytes`: the size the manifest gives it. */
  async fetchTo (
    name: string, file: string, update: Update,
    { digest, bytes, lowPriority, onPiece }: {
      digest: DigestKind | null, bytes?: number, lowPriority?: boolean, onPiece?: DownloadOptions['onPiece']
    }
  ): Promise<{ digest: string | null }> {
    const { signal, budget } = update
    const object = this.source.sibling(name)
    let fetched
    try {
      fetched = await object.fetch(null, signal)
    } catch (error) {
      if (!(error instanceof SourceError)) throw error
      throw new SourceError(`the manifest names ${name}, which cannot be downloaded: ${error.message}`)
    }
    if (!fetched.changed) throw new SourceError(`${object.shown} answered 304 to a request without validators`)
    const limit = sizeGiven(budget.next(), bytes)
    await refuseTooLarge(fetched, limit, name)
    const downloaded = await downloadObject(fetched.body, file, {
      limit, length: fetched.length, signal, digest, lowPriority, onPiece
    })
    budget.spend(downloaded.bytes)
    if (bytes !== undefined && downloaded.bytes !== bytes) {
      throw new SourceError(`${name} is ${downloaded.bytes} bytes, where the manifest says ${bytes}`)
    }
    this.log.info(
      { source: this.source.shown, object: object.shown, bytes: downloaded.bytes },
      'downloaded an object the manifest names'
    )
    return downloaded
  }

  /** What `update` downloaded, but `spared` (files in use, names a kept manifest lists); the names removed. */
  async remove (update: Update, spared: (file: string) => boolean): Promise<string[]> {
    const removed: string[] = []
    for (const file of update.objects) {
      if (spared(file)) continue
      await rm(file, { force: true })
      this.digests.delete(basename(file))
      removed.push(basename(file))
    }
    return removed
  }

  /** Every object but those named. */
  async keepOnly (names: ReadonlySet<string>): Promise<void> {
    for (const entry of await readdir(this.dir).catch(() => [])) {
      if (!entry.startsWith('.') && !names.has(entry)) await rm(join(this.dir, entry), { force: true })
    }
  }

  /** A killed process's downloads, each up to SNAPSHOT_MAX_MB. */
  async sweep (): Promise<void> {
    await sweepDeadDownloads(this.dir, entry => /^\..+\.download-(\d+)$/.exec(entry)?.[1])
  }
}

/** An object the manifest gives the size of is stopped there. */
function sizeGiven (limit: DownloadLimit, bytes: number | undefined): DownloadLimit {
  return bytes === undefined || bytes >= limit.maxBytes
    ? limit
    : { maxBytes: bytes, rule: 'the size the manifest gives it', detail: `${bytes} bytes` }
}

async function isFile (file: string): Promise<boolean> {
  return (await stat(file).catch(() => null))?.isFile() === true
}
