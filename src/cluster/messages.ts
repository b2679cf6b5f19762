// What the primary and its workers say to each other over node:cluster's IPC channel. prom-client's
// AggregatorRegistry has messages of its own on the same channel; these all have `explore` set.
import type { Status } from '../schemas/operations.js'
import type { SourceStatusJson } from '../sources/follow-source.js'

/** What a worker serves, as it reports it after its first load and every reload: a row of /-/status. */
export type WorkerState = NonNullable<Status['cluster']>['workers'][number]

export type ToWorker =
  /** Load the file (the snapshot's own, or a download); a `request` is answered with `reloaded`. */
  | { explore: 'reload', file?: string, request?: number }
  /** Serve a fleet manifest's files, snapshot then changes (follow-manifest.ts); answered as a reload is. */
  | { explore: 'serve', chain: { snapshot: string, changes: string[] }, request?: number }
  | { explore: 'cluster', workers: WorkerState[], /** The source as the primary follows it (SNAPSHOT_URL), for every worker's /-/status. */ source: SourceStatusJson | null }
  | { explore: 'metrics', request: number, text: string | null }

export type ToPrimary =
  | { explore: 'state', state: WorkerState }
  | { explore: 'reloaded', request: number, outcome: string, problems: string[] }
  | { explore: 'metrics', request: number }

export function isExploreMessage (message: unknown): message is { explore: string } {
  return typeof message === 'object' && message !== null && typeof (message as { explore?: unknown }).explore === 'string'
}
