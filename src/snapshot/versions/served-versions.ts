// The operator's versions: served, kept, pinned (ADR 025); every source's chains pass here, so the pin is checked once.
import { noOlderVersion, versionNotKept, versionNotLoaded } from '../../errors.js'
import type { KeptRecord, Newest, Versions } from '../../schemas/versions.js'
import type { Chain, ChainServer, ReloadOutcome } from '../store/snapshot-store.js'
import type { StoreLogger } from '../store/store-logger.js'
import type { ChainSink, ChainSource, FollowCause } from '../../sources/chain-source.js'
import { KeptVersions } from './kept-versions.js'
import { join } from 'node:path'
import { pinPath, readPin, writePin, type Pin } from './pin-file.js'
import { JobQueue } from '../job-queue.js'
import type { ImageShelf } from '../images/image-shelf.js'

export function versionPaths (stateDir: string): { dir: string, images: string, pinFile: string } {
  return { dir: join(stateDir, 'versions'), images: join(stateDir, 'images'), pinFile: pinPath(stateDir) }
}

interface ServedNow {
  version: string
  generatedAt: string | null
  items: Record<string, number>
}

export type OperatorAction = 'rollback' | 'pin' | 'unpin'

/** `from` and `to` are for the log. */
interface ActionResult {
  state: Versions
  from: string | null
  to: string | null
}

export interface OpenedVersions {
  kept: KeptVersions
  pin: Pin | null
  pinnedChain: Chain | null
}

/** Before the first load, which serves a pinned version; a pin no longer kept is dropped, loudly. */
export async function openVersions ({ dir, keep, pinFile, log, sweep, images = null }: {
  dir: string, keep: number, pinFile: string, log: StoreLogger, sweep: boolean, images?: ImageShelf | null
}): Promise<OpenedVersions> {
  const kept = new KeptVersions({ dir, keep, log, images })
  await kept.open({ sweep })
  let pin: Pin | null = null
  try {
    pin = await readPin(pinFile)
  } catch (error) {
    log.error({ pin: pinFile, err: error }, 'the pin does not read: following the source')
  }
  if (pin === null) return { kept, pin: null, pinnedChain: null }
  const record = kept.get(pin.version)
  if (record === null) {
    log.error({ pin: pin.version, dir },
      'the pinned version is not kept any more: the pin is dropped and the source followed')
    if (sweep) await writePin(pinFile, null)
    return { kept, pin: null, pinnedChain: null }
  }
  log.warn({ pin: pin.version, pinnedAt: pin.pinnedAt },
    'pinned: serving the pinned version, not the source\'s newest (POST /-/unpin to follow it again)')
  return { kept, pin, pinnedChain: kept.chainOf(record) }
}

export class ServedVersions implements ChainSink {
  private newest: Newest | null = null
  private readonly actions = new JobQueue()

  constructor (
    readonly kept: KeptVersions,
    private readonly pinFile: string,
    private readonly store: ChainServer,
    private readonly source: Pick<ChainSource, 'shown' | 'remote' | 'resume'>,
    private pin: Pin | null,
    private readonly log: StoreLogger
  ) {
    // Told in the same turn as the swap: a download is kept before its temporary name goes.
    store.on('served', () => { this.keep() })
  }

  private keep (): void {
    const served = this.served()
    const files = this.store.servedFiles()
    if (served === null || files === null) return
    const { snapshot, changes } = files
    if (snapshot.stamp === null) {
      this.log.info({ version: served.version }, 'served without its snapshot file (from its image): kept once the file is here')
      return
    }
    this.kept.keep({
      file: snapshot.file,
      stamp: snapshot.stamp,
      changes,
      version: served.version,
      generatedAt: served.generatedAt,
      items: served.items,
      source: this.source.shown
    }, { owned: this.source.remote }).catch(() => {})
  }

  private served (): ServedNow | null {
    const model = this.store.current()
    return model === null
      ? null
      : { version: model.info.version, generatedAt: model.info.generatedAt, items: model.itemCounts() }
  }

  pinned (): boolean {
    return this.pin !== null
  }

  private notice (newest: { source: string, etag: string | null }): void {
    this.newest = { noticedAt: new Date().toISOString(), ...newest }
  }

  holdBack (cause: FollowCause): boolean {
    if (this.pin === null) return false
    const { log } = this
    const pin = this.pin.version
    if (cause === 'signal') {
      log.info({ pin }, 'SIGHUP: pinned, so the snapshot is not reloaded (POST /-/unpin follows it again)')
    } else if ('file' in cause) {
      this.notice({ source: cause.file, etag: null })
      log.info({ snapshot: cause.file, pin }, 'the snapshot file changed; pinned, so it is not loaded')
    } else {
      this.notice({ source: cause.object, etag: cause.etag })
      log.info({ source: cause.object, etag: cause.etag, pin },
        'a newer object is published; pinned, so it is not loaded')
    }
    return true
  }

  /** Resolves once kept: a download is renamed only after. With a cause, held back while pinned. */
  async serve (chain: Chain): Promise<ReloadOutcome>
  async serve (chain: Chain, heldBackBy: FollowCause): Promise<ReloadOutcome | 'held'>
  async serve (chain: Chain, heldBackBy?: FollowCause): Promise<ReloadOutcome | 'held'> {
    if (heldBackBy !== undefined && this.holdBack(heldBackBy)) return 'held'
    const outcome = await this.store.serve(chain)
    await this.kept.idle()
    return outcome
  }

  expectChanges (): void {
    this.store.expectChanges()
  }

  currentPin (): Pin | null {
    return this.pin === null ? null : { ...this.pin }
  }

  noticed (): Newest | null {
    return this.newest === null ? null : { ...this.newest }
  }

  state (): Versions {
    const served = this.served()
    return {
      served: served === null
        ? null
        : { version: served.version, generatedAt: served.generatedAt, items: { ...served.items } },
      pin: this.currentPin(),
      newest: this.noticed(),
      // Not the change files' digests, which are for keeping.
      kept: this.kept.list().map(({ version, generatedAt, items, servedAt, source, chain }) =>
        ({ version, generatedAt, items, servedAt, source, chain, served: version === served?.version }))
    }
  }

  async carryOut (action: OperatorAction, version?: string): Promise<ActionResult> {
    if (action === 'rollback') return await this.rollback()
    if (action === 'unpin') return await this.unpin()
    return await this.pinVersion(version ?? '')
  }

  rollback (): Promise<ActionResult> {
    return this.actions.run(async () => {
      const now = this.served()?.version ?? null
      const kept = this.kept.list()
      const at = kept.findIndex(record => record.version === now)
      const previous = at < 0 ? kept.find(record => record.version !== now) : kept[at + 1]
      if (previous === undefined) throw noOlderVersion()
      return await this.serveAndPin(previous)
    })
  }

  pinVersion (version: string): Promise<ActionResult> {
    return this.actions.run(async () => {
      const record = this.kept.get(version)
      if (record === null) throw versionNotKept(version)
      return await this.serveAndPin(record)
    })
  }

  unpin (): Promise<ActionResult> {
    return this.actions.run(async () => {
      const from = this.served()?.version ?? null
      this.pin = null
      this.newest = null
      await writePin(this.pinFile, null)
      await this.source.resume()
      // So the answer lists what it loaded.
      await this.kept.idle()
      return { state: this.state(), from, to: this.served()?.version ?? null }
    })
  }

  private async serveAndPin (record: KeptRecord): Promise<ActionResult> {
    const from = this.served()?.version ?? null
    const before = this.pin
    // Pinned first: a file saved or an object published from now on is noticed, not loaded over it.
    this.pin = { version: record.version, pinnedAt: new Date().toISOString(), from }
    await this.store.idle()
    const outcome = from === record.version ? 'loaded' : await this.store.serve(this.kept.chainOf(record))
    if (outcome !== 'loaded' || this.served()?.version !== record.version) {
      this.pin = before
      throw versionNotLoaded(record.version)
    }
    await writePin(this.pinFile, this.pin)
    return { state: this.state(), from, to: record.version }
  }
}
