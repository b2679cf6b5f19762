// The snapshot as a Fastify service: loaded when the app starts (a bad or missing file fails
// `app.ready()` with the validation report), reloaded when its file changes, exposed as `app.snapshots`.
// The watcher is closed, and any reload in flight awaited, when the app closes.
import fp from 'fastify-plugin'
import { loadSnapshotFile } from '../snapshot/load-snapshot.js'
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
  const store = new SnapshotStore(snapshotPath, await loadSnapshotFile(snapshotPath), {
    settleMs: watch ? reloadDebounceMs : 0,
    log: {
      info: (fields, message) => log.info(fields, message),
      warn: (fields, message) => log.warn(fields, message),
      error: (fields, message) => log.error(fields, message)
    }
  })
  app.decorate('snapshots', store)
  const model = store.current()
  log.info({ snapshot: snapshotPath, generatedAt: model.info.generatedAt, items: model.itemCounts() }, 'snapshot loaded')

  if (watch) {
    const watcher = watchSnapshot(snapshotPath, () => { store.reload().catch(() => {}) }, {
      debounceMs: reloadDebounceMs,
      onError: error => log.error({ err: error }, 'snapshot watcher error')
    })
    await watcher.ready
    app.decorate('snapshotWatcher', watcher)
    app.addHook('onClose', async () => {
      await watcher.close()
      await store.idle()
    })
  } else {
    app.decorate('snapshotWatcher', null)
    app.addHook('onClose', () => store.idle())
  }
}, { name: 'snapshot' })
