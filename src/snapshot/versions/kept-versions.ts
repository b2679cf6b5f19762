// The last KEEP_VERSIONS versions' files in STATE_DIR/versions: going back costs no download (ADR 025).
import { chmod, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, extname, join } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { KeptRecordSchema, type KeptRecord } from '../../schemas/versions.js'
import type { Chain, ChainFile } from '../store/snapshot-store.js'
import type { StoreLogger } from '../store/store-logger.js'
import { fileDigest, fileStamp } from '../store/serve-chain.js'
import { JobQueue } from '../job-queue.js'
import { makeDirectory } from '../../make-directory.js'
import { OWNER_DIRECTORY, OWNER_FILE } from '../../owner-only.js'
import { isAlive } from '../../write-through-temporary.js'
import type { ImageShelf } from '../images/image-shelf.js'
import { shownSource } from '../../secret-url.js'
import { copyToEnd } from '../../copy-file.js'

export interface ServedVersion {
  file: string
  version: string
  generatedAt: string | null
  items: Record<string, number>
  /** The path or URL: a download's temporary name says nothing. */
  source: string
  /** Checks a copy by a stat; absent: by the copy's digest. */
  stamp?: string | null
  changes?: readonly ChainFile[]
}

interface KeepOptions {
  dir: string
  /** KEEP_VERSIONS; the served one is never removed. */
  keep: number
  log: StoreLogger
  /** Images of snapshots no kept version holds go with them. */
  images?: ImageShelf | null
}

const RECORD = 'version.json'
/** A digest (base64url) and change ids: a directory's name. */
const VERSION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._+-]*$/

export class KeptVersions {
  private records: KeptRecord[] = []
  /** Two reports of one version keep it once. */
  private readonly jobs = new JobQueue()
  private sequence = 0

  constructor (private readonly options: KeepOptions) {}

  /** A record that does not read is skipped. */
  async open ({ sweep }: { sweep: boolean }): Promise<void> {
    await makeDirectory(this.options.dir, OWNER_DIRECTORY)
    const records: KeptRecord[] = []
    for (const entry of await readdir(this.options.dir)) {
      if (entry.startsWith('.')) {
        const pid = /^\.keeping-(\d+)-/.exec(entry)?.[1]
        // A live process sharing the directory may be keeping one right now.
        if (sweep && pid !== undefined && !isAlive(Number(pid))) {
          const recovered = await this.recover(entry)
          if (recovered !== null) records.push(recovered)
        }
        continue
      }
      const record = await readRecord(join(this.options.dir, entry, RECORD))
      if (record !== null && isRecordOf(entry, record)) {
        records.push(record)
      } else {
        this.options.log.warn({ version: entry, dir: this.options.dir },
          'a kept version has no readable record: ignored')
      }
    }
    this.records = sortNewestFirst(records)
    if (sweep) await this.options.images?.keepOnly(new Set(this.records.map(record => snapshotOf(record.version))))
  }

  /** Put in place if whole (the record is written last) and its name free; else removed. */
  private async recover (entry: string): Promise<KeptRecord | null> {
    const dir = join(this.options.dir, entry)
    const record = await readRecord(join(dir, RECORD))
    if (record !== null && isRecordOf(record.version, record)) {
      try {
        await rename(dir, join(this.options.dir, record.version))
        this.options.log.warn({ version: record.version },
          'a kept version a stopped process was putting in place: put in place')
        return record
      } catch {} // its name is taken: the version in place stays
    }
    await rm(dir, { recursive: true, force: true })
    return null
  }

  /** Copies, newest first (by when each was first served). */
  list (): KeptRecord[] {
    return structuredClone(this.records)
  }

  get (version: string): KeptRecord | null {
    return this.list().find(record => record.version === version) ?? null
  }

  chainOf (record: KeptRecord): Chain {
    const dir = join(this.options.dir, record.version)
    return {
      snapshot: join(dir, record.chain.snapshot),
      changes: record.chain.changes.map(name => join(dir, name)),
      // Checked when kept: the kept snapshot's bytes are the version's.
      snapshotDigest: snapshotOf(record.version)
    }
  }

  async idle (): Promise<void> {
    await this.jobs.idle()
  }

  /** Links only when `owned`: a save in place writes through hard links (ADR 025). Never rejects. */
  keep (served: ServedVersion, { owned }: { owned: boolean }): Promise<KeptRecord | null> {
    return this.jobs.run(async () => await this.keepNow(served, owned)).catch((error: unknown) => {
      this.options.log.error(
        { version: served.version, file: served.file, err: error },
        'the served version could not be kept: a rollback cannot come back to it'
      )
      return null
    })
  }

  private async keepNow (served: ServedVersion, owned: boolean): Promise<KeptRecord | null> {
    if (!VERSION_NAME.test(served.version)) throw new Error(`"${served.version}" cannot name a directory`)
    // The name says the snapshot and last change id only: other content under it replaces what is kept.
    const changes = served.changes ?? []
    const digests = changes.map(change => change.digest)
    const known = this.records.find(record => record.version === served.version)
    if (known !== undefined && holdsChanges(known, digests)) return known
    // A change-built version without its change files would roll back to other content.
    const snapshotVersion = snapshotOf(served.version)
    if (snapshotVersion !== served.version && changes.length === 0) {
      this.options.log.warn({ version: served.version }, 'a version built by change files came without them: not kept')
      return null
    }
    // Copying a pipe would wait for a writer for ever.
    if (!(await stat(served.file)).isFile()) {
      this.options.log.warn(
        { version: served.version, file: served.file },
        'the snapshot is not a regular file: this version is not kept'
      )
      return null
    }
    await makeDirectory(this.options.dir, OWNER_DIRECTORY)
    const building = join(this.options.dir, `.keeping-${process.pid}-${++this.sequence}`)
    await mkdir(building, OWNER_DIRECTORY)
    try {
      const snapshot = `snapshot${extname(served.file).toLowerCase()}`
      const keptSnapshot = this.records.find(record =>
        record.version === snapshotVersion && record.chain.changes.length === 0)
      const how = await placeChecked(keptSnapshot === undefined ? null : this.chainOf(keptSnapshot).snapshot,
        served.file, join(building, snapshot), owned, served.stamp, snapshotVersion)
      if (how === null) {
        this.options.log.warn(
          { version: served.version, file: served.file },
          'the snapshot file changed after it was loaded: this version is not kept (the newer file is loaded next)'
        )
        return null
      }
      // Linked when kept already, else a day of change files is copied again for every version.
      const changeNames: string[] = []
      for (const [i, change] of changes.entries()) {
        const name = `change-${String(i + 1).padStart(4, '0')}.jsonl`
        const placed = await placeChecked(this.keptChangeFile(change.digest),
          change.file, join(building, name), owned, change.stamp, change.digest)
        if (placed === null) {
          this.options.log.warn(
            { version: served.version, file: change.file },
            'a change file changed after it was applied: this version is not kept (the newer file is applied next)'
          )
          return null
        }
        changeNames.push(name)
      }
      const record: KeptRecord = {
        version: served.version,
        generatedAt: served.generatedAt,
        items: { ...served.items },
        // Later than every kept one, even within one millisecond.
        servedAt: new Date(Math.max(Date.now(), Date.parse(this.records[0]?.servedAt ?? '') + 1 || 0)).toISOString(),
        source: served.source,
        chain: { snapshot, changes: changeNames },
        ...(changes.length === 0 ? {} : { changeDigests: digests })
      }
      await writeFile(join(building, RECORD), `${JSON.stringify(record, null, 2)}\n`, { mode: OWNER_FILE })
      const placed = await this.place(building, served.version, record)
      this.records = sortNewestFirst([placed, ...this.records.filter(kept => kept.version !== placed.version)])
      this.options.log.info(
        { version: record.version, generatedAt: record.generatedAt, kept: how, source: record.source },
        'served version kept'
      )
      await this.prune(served.version)
      return record
    } finally {
      await rm(building, { recursive: true, force: true })
    }
  }

  /**
   * In one rename. The same content kept meanwhile by another process is taken instead; other content under the name
   * is moved aside to a hidden name `open` sweeps.
   */
  private async place (building: string, version: string, record: KeptRecord): Promise<KeptRecord> {
    const place = join(this.options.dir, version)
    try {
      await rename(building, place)
      return record
    } catch (error) {
      if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error
    }
    const there = await readRecord(join(place, RECORD))
    if (there !== null && isRecordOf(version, there) && holdsChanges(there, record.changeDigests ?? [])) return there
    const aside = join(this.options.dir, `.keeping-${process.pid}-${++this.sequence}`)
    try {
      await rename(place, aside)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    try {
      await rename(building, place)
    } catch (error) {
      await rename(aside, place).catch(() => {})
      throw error
    }
    await rm(aside, { recursive: true, force: true })
    return record
  }

  private keptChangeFile (digest: string): string | null {
    for (const record of this.records) {
      // A record of an older build has no list.
      const at = record.changeDigests?.indexOf(digest) ?? -1
      const name = record.chain.changes[at]
      if (at >= 0 && name !== undefined) return join(this.options.dir, record.version, name)
    }
    return null
  }

  async prune (served: string): Promise<void> {
    const stay = new Set(this.records.slice(0, this.options.keep).map(record => record.version))
    stay.add(served)
    for (const record of this.records.filter(record => !stay.has(record.version))) {
      await rm(join(this.options.dir, record.version), { recursive: true, force: true })
      this.options.log.info({ version: record.version, keep: this.options.keep },
        'kept version removed (KEEP_VERSIONS)')
    }
    this.records = this.records.filter(record => stay.has(record.version))
    // Not awaited: it waits behind an image being written, and a download's rename waits for keeping.
    this.options.images?.keepOnly(new Set([...stay].map(snapshotOf))).catch(() => {})
  }
}

const recordCheck = TypeCompiler.Compile(KeptRecordSchema)

function snapshotOf (version: string): string {
  return version.split('+')[0] as string
}

async function readRecord (file: string): Promise<KeptRecord | null> {
  try {
    const record: unknown = JSON.parse(await readFile(file, 'utf8'))
    // An older build kept the URL with its query: shown from here on without it.
    return recordCheck.Check(record) ? { ...record, source: shownSource(record.source) } : null
  } catch {
    return null
  }
}

/** A record edited by hand must never make a rollback read, or a prune remove, anything outside its directory. */
function isRecordOf (entry: string, record: KeptRecord): boolean {
  const inside = (name: string): boolean =>
    name !== '' && name !== '.' && name !== '..' && basename(name) === name && !name.includes('\\')
  return record.version === entry && VERSION_NAME.test(entry) &&
    inside(record.chain.snapshot) && record.chain.changes.every(inside) &&
    (record.changeDigests === undefined || record.changeDigests.length === record.chain.changes.length)
}

/** An older build's record lists no digests: their count is compared. */
function holdsChanges (record: KeptRecord, digests: readonly string[]): boolean {
  return record.changeDigests === undefined
    ? record.chain.changes.length === digests.length
    : record.changeDigests.join('\n') === digests.join('\n')
}

/** By code unit, not `localeCompare`: its first call loads ~2.1 MB of ICU data for good (ADR 026). */
function sortNewestFirst (records: KeptRecord[]): KeptRecord[] {
  return records.sort((a, b) => a.servedAt < b.servedAt ? 1 : a.servedAt > b.servedAt ? -1 : 0)
}

/** A copy (a reflink where possible) when links are refused. */
async function placeFile (from: string, to: string, owned: boolean): Promise<'linked' | 'copied'> {
  if (owned) {
    try {
      await link(from, to)
      return 'linked'
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (!['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP'].includes(code ?? '')) throw error
    }
  }
  await copyToEnd(from, to)
  // A copy takes the editor's mode; in a directory only the owner may enter, so never readable meanwhile.
  await chmod(to, OWNER_FILE)
  return 'copied'
}

/**
 * Null when the copy is not the bytes read: checked by stamp, not reading 1.4 GB again (ADR 025); the stamp has no
 * ctime, so a writer restoring the old mtime on a same-size file goes unseen.
 */
async function placeChecked (
  kept: string | null, file: string, to: string, owned: boolean, stamp: string | null | undefined, digest: string
): Promise<'linked' | 'copied' | null> {
  const fromKept = kept === null ? null : await placeFile(kept, to, true).catch(() => null)
  if (fromKept !== null) return fromKept
  // A named pipe put in its place would hold the copy (and the exit) for ever.
  const now = await fileStamp(file)
  if (now === null || now === 'not a regular file' || (stamp != null && now !== stamp)) return null
  const how = await placeFile(file, to, owned)
  if (how === 'linked') return how
  const unchanged = stamp != null ? await fileStamp(file) === stamp : await fileDigest(to) === digest
  return unchanged ? how : null
}
