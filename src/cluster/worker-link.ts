// A worker's side of the cluster (primary.ts): it reloads when the primary says so, reports what it serves
// after every load, keeps the primary's table of every worker for /-/status, and asks the primary for the
// cluster's metrics. Plain TypeScript over node:cluster's IPC channel.
import type { SnapshotStore } from '../snapshot/store/snapshot-store.js'
import type { SourceStatusJson } from '../sources/follow-source.js'
import { isExploreMessage, type ToPrimary, type ToWorker, type WorkerState } from './messages.js'

/**
 * How long a worker waits for the cluster's metrics before it answers with its own: longer than the
 * primary waits for the workers (prom-client: 5 s), so that the primary's answer, whole or not, comes first.
 */
const METRICS_TIMEOUT_MS = 6000

export class WorkerLink {
  private table: WorkerState[] = []
  private sharedSource: SourceStatusJson | null = null
  private lastReload: string | null = null
  private nextRequest = 1
  private readonly waiting = new Map<number, (text: string | null) => void>()

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
    this.send({ explore: 'state', state })
  }

  /** The metrics of every worker, summed by the primary; null when it does not answer in time. */
  async clusterMetrics (): Promise<string | null> {
    const request = this.nextRequest++
    return await new Promise(resolve => {
      const timer = setTimeout(() => { this.waiting.delete(request); resolve(null) }, METRICS_TIMEOUT_MS)
      this.waiting.set(request, text => { clearTimeout(timer); resolve(text) })
      this.send({ explore: 'metrics', request })
    })
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
        this.send({ explore: 'reloaded', request, outcome, problems })
      }, () => {})
    } else if (said.explore === 'cluster') {
      this.table = said.workers
      this.sharedSource = said.source
    } else if (said.explore === 'metrics') {
      const done = this.waiting.get(said.request)
      this.waiting.delete(said.request)
      done?.(said.text)
    }
  }

  private send (message: ToPrimary): void {
    // A worker whose primary is gone has nobody to tell: it is about to be stopped anyway.
    if (process.connected) process.send?.(message)
  }
}
