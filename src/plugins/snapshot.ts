// Loads the snapshot when the app starts and exposes the store as `app.snapshots`. A bad or missing
// snapshot fails `app.ready()` with the validation report.
import fp from 'fastify-plugin'
import { loadSnapshotFile } from '../snapshot/load-snapshot.js'
import { SnapshotStore } from '../snapshot/snapshot-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    snapshots: SnapshotStore
  }
}

export interface SnapshotPluginOptions {
  snapshotPath: string
}

export default fp<SnapshotPluginOptions>(async function snapshotPlugin (app, { snapshotPath }) {
  const store = new SnapshotStore(await loadSnapshotFile(snapshotPath))
  app.decorate('snapshots', store)
  const model = store.current()
  app.log.info({ snapshot: model.info.source, generatedAt: model.info.generatedAt, items: model.itemCounts() }, 'snapshot loaded')
}, { name: 'snapshot' })
