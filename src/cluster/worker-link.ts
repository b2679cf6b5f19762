// A worker's side of the cluster (primary.ts): it reloads when the primary says so, reports what it serves
// after every load, keeps the primary's table of every worker for /-/status, and asks the primary for the
// cluster's metrics. Plain TypeScript over node:cluster's IPC channel.
import { relayedError, versionsUnavailable } from '../errors.js'
import type { VersionActions } from '../routes/ops-actions-route.js'
import type { Newest, Versions } from '../schemas/versions.js'
import type { SnapshotStore } from '../snapshot/store/snapshot-store.js'
import type { Pin } from '../snapshot/versions/pin-file.js'
import type { ActionResult, OperatorAction } from '../snapshot/versions/served-versions.js'
import type { SourceStatusJson } from '../sources/follow-source.js'
import { askPrimary, tellPrimary } from './ask-primary.js'
import { isExploreMessage, type ToWorker, type WorkerServes, type WorkerState } from './messages.js'

/**
 * How long a worker waits for the cluster's metrics before it answers with its own: longer than the
 * primary waits for the workers (prom-client: 5 s), so that the primary's answer, whole or not, comes first.
 */
const METRICS_TIMEOUT_MS = 6000
/** An operator's action waits for a load in every worker: as long as a large snapshot's load may take. */
const VERSIONS_TIMEOUT_MS = 600_000

export class WorkerLink {
  private table: WorkerState[] = []
  private sharedSource: SourceStatusJson | null = null
  private lastReload: string | null = null
  private pinned: { pin: Pin | null, newest: Newest | null } = { pin: null, newest: null }

  constructor (private readonly id: number, private readonly store: SnapshotStore) {
    process.on('message', (message: unknown) => { this.receive(message) })
    store.on('reloaded', outcome => {
      this.lastReload = outcome
      this.report()
    })
  }

  /** Every worker and what it serves, as the primary last shared it. */
  workers (): WorkerState[] {
    return this.table.map(state => ({ ...state }))
  }

  /** The published source as the primary follows it; null when it follows none. */
  source (): SourceStatusJson | null {
    return this.sharedSource === null ? null : { ...this.sharedSource }
  }

  /** Tells the primary what this worker serves now. */
  report (): void {
    const model = this.store.current()
    const state: WorkerState = {
      id: this.id,
      pid: process.pid,
      version: model?.info.version ?? null,
      generatedAt: model?.info.generatedAt ?? null,
      loadedAt: model?.info.loadedAt.toISOString() ?? null,
      lastReload: this.lastReload
    }
    const files = this.store.servedFiles()
    const served: WorkerServes | null = model === null || files === null
      ? null
      : { file: files.snapshot.file, stamp: files.snapshot.stamp, changes: files.changes, items: model.itemCounts() }
    tellPrimary({ explore: 'state', state, ...(served === null ? {} : { served }) })
  }

  /** The pin as the primary, which holds it, last shared it. */
  pin (): { pin: Pin | null, newest: Newest | null } {
    return { pin: this.pinned.pin === null ? null : { ...this.pinned.pin }, newest: this.pinned.newest === null ? null : { ...this.pinned.newest } }
  }

  /** The operator's versions, held by the primary: each request is answered by it. */
  versionActions (): VersionActions {
    const ask = async (action: OperatorAction | 'state', version?: string): Promise<ActionResult> => {
      const { answer } = await askPrimary('versions', { action, ...(version === undefined ? {} : { version }) }, VERSIONS_TIMEOUT_MS)
      if (answer === null) throw versionsUnavailable()
      if (answer.error !== null) throw relayedError(answer.error)
      if (answer.result === null) throw versionsUnavailable()
      return answer.result
    }
    return {
      state: async (): Promise<Versions> => (await ask('state')).state,
      act: async (action, version) => await ask(action, version)
    }
  }

  /** The metrics of every worker, combined by the primary; null when it does not answer in time. */
  async clusterMetrics (): Promise<string | null> {
    const { answer } = await askPrimary('metrics', {}, METRICS_TIMEOUT_MS)
    return answer?.text ?? null
  }

  private receive (message: unknown): void {
    if (!isExploreMessage(message)) return
    const said = message as ToWorker
    if (said.explore === 'reload' || said.explore === 'serve') {
      const { request } = said
      const done = said.explore === 'serve' ? this.store.serve(said.chain) : this.store.reload(said.file)
      done.then(outcome => {
        if (request === undefined) return
        const problems = outcome === 'loaded' ? [] : [...(this.store.status().lastFailure?.problems ?? [])]
        tellPrimary({ explore: 'reloaded', request, outcome, problems })
      }, () => {})
    } else if (said.explore === 'cluster') {
      this.table = said.workers
      this.sharedSource = said.source
    } else if (said.explore === 'pin') {
      this.pinned = { pin: said.pin, newest: said.newest }
    }
  }
}
