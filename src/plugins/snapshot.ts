// The snapshot as a Fastify service: its first load started with the app (`app.snapshots.start()`, which
// rejects with the validation report of a bad or missing file), reloaded when its file changes, exposed as
// `app.snapshots`. The watcher is closed, and any load in flight awaited, when the app closes.
import fp from 'fastify-plugin'
import { SnapshotStore } from '../snapshot/snapshot-store.js'
import { watchSnapshot, type SnapshotWatcher } from '../snapshot/watch-snapshot.js'

declare module 'fastify' {
  interface FastifyInstance {
    snapshots: SnapshotStore
    /** The file watcher, or null when watching is off. */
    snapshotWatcher: SnapshotWatcher | null
  }
}

export interface SnapshotPluginOptions {
  snapshotPath: string
  watch: boolean
  reloadDebounceMs: number
}

export default fp<SnapshotPluginOptions>(async function snapshotPlugin (app, { snapshotPath, watch, reloadDebounceMs }) {
  const log = app.log.child({ component: 'snapshot' })
  const store = new SnapshotStore(snapshotPath, {
    settleMs: watch ? reloadDebounceMs : 0,
    log: {
      info: (fields, message) => log.info(fields, message),
      warn: (fields, message) => log.warn(fields, message),
      error: (fields, message) => log.error(fields, message)
    }
  })
  app.decorate('snapshots', store)
  app.decorate('snapshotWatcher', null)
  // The first load is not awaited here: a plugin has 10 s to load, a snapshot as long as its size needs.
  // The server answers meanwhile (/-/healthz, /-/readyz 503); server.ts exits if the file is bad.
  const started = Date.now()
  store.start().then(model => {
    log.info({ snapshot: snapshotPath, generatedAt: model.info.generatedAt, items: model.itemCounts(), ms: Date.now() - started }, 'snapshot loaded')
  }, () => {})

  let watcher: SnapshotWatcher | null = null
  if (watch) {
    // Watched from the start: a save during the first load is loaded after it (the store runs one at a time).
    watcher = watchSnapshot(snapshotPath, () => { store.reload().catch(() => {}) }, {
      debounceMs: reloadDebounceMs,
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
