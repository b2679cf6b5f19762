// The snapshot as a Fastify service (`app.snapshots`): a file (SNAPSHOT_PATH) loaded and watched, or a published
// source (SNAPSHOT_URL) followed by `app.snapshotSource`; both feed one store, with the kept versions and the pin.
import { existsSync } from 'node:fs'
import fp from 'fastify-plugin'
import { errnoText, StartError } from '../errors.js'
import { SnapshotStore, type StoreLogger } from '../snapshot/store/snapshot-store.js'
import {
  openVersions, ServedVersions, versionPaths, type OpenedVersions
} from '../snapshot/versions/served-versions.js'
import { pruneStates, claimState } from '../snapshot/versions/prune-states.js'
import { watchSnapshot, type SnapshotWatcher } from '../snapshot/store/watch-snapshot.js'
import type { SourceFollower } from '../sources/follow-source.js'
import { followedFile, followerFor } from '../sources/open-follower.js'
import { openSource } from '../sources/open-source.js'
import type { MemoryGuard } from '../snapshot/memory-budget.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'

declare module 'fastify' {
  interface FastifyInstance {
    snapshots: SnapshotStore
    /** The file watcher, or null when watching is off (or the snapshot is followed from a URL). */
    snapshotWatcher: SnapshotWatcher | null
    /** The follower of SNAPSHOT_URL, or null when the snapshot is a file. */
    snapshotSource: SourceFollower | null
    /** The kept versions and the pin. */
    snapshotVersions: ServedVersions
  }
}

interface SnapshotPluginOptions {
  snapshotPath: string
  /** The change files' directory, for SNAPSHOT_PATH. */
  changesDir?: string | null
  watch: boolean
  reloadDebounceMs: number
  /** The memory budget every load is held to. */
  memory: MemoryGuard
  /** SNAPSHOT_URL and its settings; null to serve SNAPSHOT_PATH. */
  remote: {
    url: string
    pollSeconds: number
    cacheDir: string
    maxBytes: number
    forcePathStyle: boolean
    /** SNAPSHOT_HTTP_HEADERS (null: none). */
    headers?: Readonly<Record<string, string>> | null
  } | null
  /** STATE_DIR, KEEP_VERSIONS and STATE_PRUNE_DAYS: where served versions are kept, and the pin. */
  versions: { stateDir: string, keep: number, pruneDays: number }
  /** Hands each version served to the serving threads; resolves once they all serve it (null: none). */
  publish?: ((model: SnapshotModel) => Promise<void>) | null
}

export default fp<SnapshotPluginOptions>(async function snapshotPlugin (app, {
  snapshotPath, changesDir = null, watch, reloadDebounceMs, memory, remote, versions: versionOptions, publish = null
}) {
  const log = app.log.child({ component: 'snapshot' })
  const storeLog: StoreLogger = log
  app.decorate('snapshotWatcher', null)
  app.decorate('snapshotSource', null)
  // Read before the first load, which serves the pinned version if there is one. A STATE_DIR that cannot be used
  // stops the start: a replica without it would refuse every operator's action.
  const { stateDir } = versionOptions
  const made = !existsSync(stateDir)
  let opened: OpenedVersions
  let letGo: () => void
  /** Whether any version was ever served (the store's first `served`). */
  let served = false
  try {
    opened = await openVersions({ ...versionPaths(stateDir), keep: versionOptions.keep, log: storeLog, sweep: true })
    // A start that never served (a refused first file, a port in use) leaves no state it made: at exit too.
    letGo = await claimState(stateDir, made, () => served)
  } catch (error) {
    throw new StartError(
      `STATE_DIR=${stateDir}: cannot be used (${errnoText(error)}): set STATE_DIR to a directory this user can create and write`
    )
  }
  process.once('exit', letGo)
  app.addHook('onClose', async () => {
    process.off('exit', letGo)
    letGo()
  })
  await pruneStates(stateDir, versionOptions.pruneDays, storeLog)
  // A version being kept is finished before the app is closed (its directory is whole, and nothing writes after).
  app.addHook('onClose', async () => { await opened.kept.idle() })

  if (remote !== null) {
    const source = await openSource(remote.url, { forcePathStyle: remote.forcePathStyle, headers: remote.headers })
    const store = new SnapshotStore(
      followedFile(source, remote.cacheDir),
      { log: storeLog, memory, first: opened.pinnedChain, publish }
    )
    app.decorate('snapshots', store)
    store.once('served', () => { served = true })
    app.addHook('onClose', async () => { await store.idle() })
    let follower: SourceFollower | null = null
    // What is held (the cached copy, or the cached manifest's chain), then any newer object.
    const versions = new ServedVersions(opened.kept, versionPaths(versionOptions.stateDir).pinFile, store, {
      source: source.shown, owned: true, follow: async () => { await follower?.resume() }
    }, opened.pin)
    app.decorate('snapshotVersions', versions)
    follower = followerFor(source, store, {
      cacheDir: remote.cacheDir,
      pollSeconds: remote.pollSeconds,
      maxBytes: remote.maxBytes,
      log: storeLog,
      held: () => versions.pinned(),
      onNoticed: validators => { versions.holdBack({ object: source.shown, etag: validators.etag }, storeLog) },
      // The follower's loads are kept before it renames the download over the cached copy.
      settled: async () => { await opened.kept.idle() }
    })
    app.snapshotSource = follower
    // Never awaited by the app: a replica whose store is down listens, unready, and keeps trying.
    follower.start().catch((error: unknown) => log.error({ err: error }, 'the snapshot source cannot be followed'))
    app.addHook('onClose', async () => { await follower.stop() })
    return
  }

  const store = new SnapshotStore(snapshotPath, {
    settleMs: watch ? reloadDebounceMs : 0, log: storeLog, memory, first: opened.pinnedChain, changesDir, publish
  })
  app.decorate('snapshots', store)
  store.once('served', () => { served = true })
  const versions = new ServedVersions(opened.kept, versionPaths(versionOptions.stateDir).pinFile, store, {
    source: snapshotPath, owned: false, follow: async () => { await store.reload() }
  }, opened.pin)
  app.decorate('snapshotVersions', versions)
  // The one start of the first load, not awaited: a plugin has 10 s to load, a snapshot as long as its
  // size needs. The server answers meanwhile (/-/readyz 503); serve.ts waits for it and exits on a bad file.
  store.start().catch(() => {})

  let watcher: SnapshotWatcher | null = null
  if (watch) {
    // Watched from the start: a save during the first load is loaded after it (the store runs one at a time).
    watcher = watchSnapshot(snapshotPath, () => {
      if (versions.holdBack({ file: snapshotPath }, storeLog)) return
      store.reload().catch(() => {})
    }, {
      debounceMs: reloadDebounceMs,
      changesDir,
      onError: error => log.error({ err: error }, 'snapshot watcher error')
    })
    await watcher.ready
    app.snapshotWatcher = watcher
  }
  app.addHook('onClose', async () => {
    await watcher?.close()
    await store.idle()
  })
}, { name: 'snapshot' })
