// The snapshot as a Fastify service: a watched file or a followed URL (`app.snapshotSource`) hands its chains to the
// kept versions and the pin (`app.snapshotVersions`), which serve them through the store (`app.snapshots`).
import { existsSync } from 'node:fs'
import fp from 'fastify-plugin'
import { errnoText, StartError } from '../errors.js'
import { SnapshotStore } from '../snapshot/store/snapshot-store.js'
import {
  openVersions, ServedVersions, versionPaths, type OpenedVersions
} from '../snapshot/versions/served-versions.js'
import { pruneStates, claimState } from '../snapshot/versions/prune-states.js'
import { tightenOwnFiles } from '../owner-only.js'
import type { ChainSource } from '../sources/chain-source.js'
import { WatchedFile, type SnapshotWatcher } from '../sources/watched-file.js'
import { ImageShelf } from '../snapshot/images/image-shelf.js'
import { followedFile, followerFor } from '../sources/open-follower.js'
import { openSource } from '../sources/open-source.js'
import type { SecretUrl } from '../secret-url.js'
import type { MemoryGuard } from '../snapshot/memory-budget.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'

declare module 'fastify' {
  interface FastifyInstance {
    snapshots: SnapshotStore
    /** null when watching is off, or the snapshot is followed from a URL. */
    snapshotWatcher: SnapshotWatcher | null
    snapshotSource: ChainSource
    snapshotVersions: ServedVersions
    /** serve.ts, on a start that failed: whatever loads before the exit, the start never served. */
    abandonState: () => void
  }
}

interface SnapshotPluginOptions {
  snapshotPath: string
  changesDir: string
  watch: boolean
  reloadDebounceMs: number
  memory: MemoryGuard
  /** SNAPSHOT_URL and its settings; null to serve SNAPSHOT_PATH. */
  remote: {
    url: SecretUrl
    pollSeconds: number
    cacheDir: string
    maxBytes: number
    forcePathStyle: boolean
    headers?: Readonly<Record<string, string>> | null
  } | null
  /** STATE_DIR, KEEP_VERSIONS and STATE_PRUNE_DAYS. */
  versions: { stateDir: string, keep: number, pruneDays: number }
  /** Hands each version served to the serving threads; resolves once they all serve it (null: none). */
  publish: ((model: SnapshotModel) => Promise<void>) | null
}

export default fp<SnapshotPluginOptions>(async function snapshotPlugin (app, {
  snapshotPath, changesDir, watch, reloadDebounceMs, memory, remote, versions: versionOptions, publish
}) {
  const log = app.log.child({ component: 'snapshot' })
  app.decorate('snapshotWatcher', null)
  // Before the first load, which serves the pin if any. An unusable STATE_DIR stops the start: every operator's
  // action would be refused.
  const { stateDir } = versionOptions
  const made = !existsSync(stateDir)
  const paths = versionPaths(stateDir)
  const images = new ImageShelf(paths.images, log, memory)
  let opened: OpenedVersions
  let letGo: () => void
  let served = false
  let abandoned = false
  try {
    await tightenOwnFiles([paths.dir, paths.images, paths.pinFile], log)
    opened = await openVersions({ ...paths, keep: versionOptions.keep, log, sweep: true, images })
    // A start that never served (a refused first file, a port in use) leaves no state it made: at exit too.
    letGo = await claimState(stateDir, made, () => served && !abandoned)
  } catch (error) {
    throw new StartError(
      `STATE_DIR=${stateDir}: cannot be used (${errnoText(error)}): set STATE_DIR to a directory this user can create and write`
    )
  }
  process.once('exit', letGo)
  app.decorate('abandonState', () => { abandoned = true })
  app.addHook('onClose', async () => {
    // Abandoned: at exit again, for a first load that ends after the close (its version kept, its image written).
    if (!abandoned) process.off('exit', letGo)
    letGo()
  })
  await pruneStates(stateDir, versionOptions.pruneDays, log)
  // A version being kept is finished first: its directory is whole, and nothing writes after close.
  app.addHook('onClose', async () => {
    await opened.kept.idle()
  })

  let source: ChainSource
  let store: SnapshotStore
  if (remote === null) {
    const file = new WatchedFile(snapshotPath, { changesDir, watch, debounceMs: reloadDebounceMs, log })
    store = new SnapshotStore(snapshotPath, {
      settleMs: watch ? reloadDebounceMs : 0,
      log,
      memory,
      first: opened.pinnedChain ?? await file.chain(),
      publish,
      images
    })
    source = file
  } else {
    const from = await openSource(remote.url, { forcePathStyle: remote.forcePathStyle, headers: remote.headers })
    const cached = followedFile(from, remote.cacheDir)
    store = new SnapshotStore(cached, { log, memory, first: opened.pinnedChain, publish, images })
    source = followerFor(from, store, {
      cacheDir: remote.cacheDir, pollSeconds: remote.pollSeconds, maxBytes: remote.maxBytes, log, images
    })
  }
  app.decorate('snapshots', store)
  app.decorate('snapshotSource', source)
  store.once('served', () => { served = true })
  const versions = new ServedVersions(opened.kept, paths.pinFile, store, source, opened.pin, log)
  app.decorate('snapshotVersions', versions)
  app.addHook('onClose', async () => {
    // First: a download queued behind an image write would hold the source's stop for the whole write.
    const imagesClosed = images.close()
    await source.stop()
    await store.close()
    await imagesClosed
  })
  if (source instanceof WatchedFile) {
    // The first load's one start, not awaited: a plugin has 10 s, a load as long as it needs (/-/readyz 503
    // meanwhile; serve.ts waits for it and exits on a bad file).
    store.start().catch(() => {})
    await source.start(versions)
    app.snapshotWatcher = source.watcher
  } else {
    // Never awaited by the app: a replica whose store is down listens, unready, and keeps trying.
    source.start(versions).catch((error: unknown) => log.error({ err: error }, 'the snapshot source cannot be followed'))
  }
}, { name: 'snapshot' })
