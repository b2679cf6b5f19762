// What the primary and its workers say to each other over node:cluster's IPC channel. prom-client's
// AggregatorRegistry has messages of its own on the same channel; these all have `explore` set.
import type { ErrorBody } from '../errors.js'
import type { Status } from '../schemas/operations.js'
import type { Newest } from '../schemas/versions.js'
import type { ActionResult, OperatorAction } from '../snapshot/versions/served-versions.js'
import type { Pin } from '../snapshot/versions/pin-file.js'
import type { Chain, ChainFile } from '../snapshot/store/snapshot-store.js'
import type { SourceStatusJson } from '../sources/follow-source.js'
import type { LoadAnswer } from './memory-order.js'

/** What a worker serves, as it reports it after its first load and every reload: a row of /-/status. */
export type WorkerState = NonNullable<Status['cluster']>['workers'][number]

/** What a worker serves, for the primary to keep: its snapshot file and change files as it read them. */
export interface WorkerServes {
  file: string
  stamp: string | null
  changes: ChainFile[]
  items: Record<string, number>
}

export type ToWorker =
  /** Load the file (the snapshot's own, or a download); a `request` is answered with `reloaded`. */
  | { explore: 'reload', file?: string, request?: number }
  /** Serve a fleet manifest's files, snapshot then changes (follow-manifest.ts); answered as a reload is. */
  | { explore: 'serve', chain: Chain, request?: number }
  | { explore: 'cluster', workers: WorkerState[], /** The source as the primary follows it (SNAPSHOT_URL), for every worker's /-/status. */ source: SourceStatusJson | null }
  | { explore: 'metrics', request: number, text: string | null }
  /** The primary's answer to a worker's `memory` question (memory-order.ts). */
  | { explore: 'memory', request: number, answer: LoadAnswer }
  /** The answer to a worker's `versions`: the result, or the error to answer the operator with. */
  | { explore: 'versions', request: number, result: ActionResult | null, error: { statusCode: number, code: string, body: ErrorBody } | null }
  /** The pin and what it holds back, held by the primary: for every worker's /-/status and metrics. */
  | { explore: 'pin', pin: Pin | null, newest: Newest | null }

export type ToPrimary =
  /** `served`: the files served (as read) and the items, for the primary to keep the version. */
  | { explore: 'state', state: WorkerState, served?: WorkerServes }
  /** An operator's request that reached this worker; the primary holds the versions. */
  | { explore: 'versions', request: number, action: OperatorAction | 'state', version?: string }
  | { explore: 'reloaded', request: number, outcome: string, problems: string[] }
  | { explore: 'metrics', request: number }
  /** May this worker start a load whose peak is estimated at `neededBytes`? (memory-order.ts) */
  | { explore: 'memory', request: number, neededBytes: number }
  /** The load granted to `request` is over. */
  | { explore: 'memory-done', request: number }

export function isExploreMessage (message: unknown): message is { explore: string } {
  return typeof message === 'object' && message !== null && typeof (message as { explore?: unknown }).explore === 'string'
}
