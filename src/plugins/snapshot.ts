// The snapshot as a Fastify service, exposed as `app.snapshots`. From a file (SNAPSHOT_PATH): its first
// load started with the app (`app.snapshots.start()` rejects with the validation report of a bad or missing
// file), reloaded when the file changes. From a published source (SNAPSHOT_URL): followed by
// `app.snapshotSource`, which serves its cached copy, polls, and hands each new object to the same store.
// The watcher or the follower is stopped, and any load in flight awaited, when the app closes.
import fp from 'fastify-plugin'
import { SnapshotStore } from '../snapshot/store/snapshot-store.js'
import { watchSnapshot, type SnapshotWatcher } from '../snapshot/store/watch-snapshot.js'
import type { SourceFollower } from '../sources/follow-source.js'
import { followedFile, followerFor } from '../sources/open-follower.js'
import { openSource } from '../sources/open-source.js'

declare module 'fastify' {
  interface FastifyInstance {
    snapshots: SnapshotStore
    /** The file watcher, or null when watching is off (or the snapshot is followed from a URL). */
    snapshotWatcher: SnapshotWatcher | null
    /** The follower of SNAPSHOT_URL, or null when the snapshot is a file. */
    snapshotSource: SourceFollower | null
  }
}

export interface SnapshotPluginOptions {
  snapshotPath: string
  /** The change files' directory (contract §9), for SNAPSHOT_PATH. */
  changesDir?: string | null
  watch: boolean
  reloadDebounceMs: number
  /** SNAPSHOT_URL and its settings; null to serve SNAPSHOT_PATH. */
  remote: {
    url: string
    pollSeconds: number
    cacheDir: string
    maxBytes: number
    forcePathStyle: boolean
    /** False in a cluster's worker: the primary follows, and tells the worker which file to load. */
    follow: boolean
  } | null
}

export default fp<SnapshotPluginOptions>(async function snapshotPlugin (app, { snapshotPath, changesDir = null, watch, reloadDebounceMs, remote }) {
  const log = app.log.child({ component: 'snapshot' })
  const storeLog = {
    info: (fields: object, message: string) => log.info(fields, message),
    warn: (fields: object, message: string) => log.warn(fields, message),
    error: (fields: object, message: string) => log.error(fields, message)
  }
  app.decorate('snapshotWatcher', null)
  app.decorate('snapshotSource', null)

  if (remote !== null) {
    const source = await openSource(remote.url, { forcePathStyle: remote.forcePathStyle })
    const store = new SnapshotStore(followedFile(source, remote.cacheDir), { log: storeLog })
    app.decorate('snapshots', store)
    app.addHook('onClose', async () => { await store.idle() })
    if (!remote.follow) return
    const follower = followerFor(source, store, { cacheDir: remote.cacheDir, pollSeconds: remote.pollSeconds, maxBytes: remote.maxBytes, log: storeLog })
    app.snapshotSource = follower
    // Never awaited by the app: a replica whose store is down listens, unready, and keeps trying.
    follower.start().catch((error: unknown) => log.error({ err: error }, 'the snapshot source cannot be followed'))
    app.addHook('onClose', async () => { await follower.stop() })
    return
  }

  const store = new SnapshotStore(snapshotPath, { settleMs: watch ? reloadDebounceMs : 0, log: storeLog, changesDir })
  app.decorate('snapshots', store)
  // The first load is not awaited here: a plugin has 10 s to load, a snapshot as long as its size needs.
  // The server answers meanwhile (/-/healthz, /-/readyz 503); serve.ts exits if the file is bad.
  const started = Date.now()
  store.start().then(model => {
    log.info({ snapshot: snapshotPath, generatedAt: model.info.generatedAt, items: model.itemCounts(), ms: Date.now() - started }, 'snapshot loaded')
  }, () => {})

  let watcher: SnapshotWatcher | null = null
  if (watch) {
    // Watched from the start: a save during the first load is loaded after it (the store runs one at a time).
    watcher = watchSnapshot(snapshotPath, () => { store.reload().catch(() => {}) }, {
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
