// What the control thread and a serving thread say to each other over the thread's port (ADR 029).
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import type { MetricObjectWithValues, MetricValue } from 'prom-client'
import type { Config } from '../config.js'
import type { VersionMessage } from './version-handoff.js'

/** What a serving thread starts with (its workerData). */
export interface ThreadStart {
  /** The configuration, secrets left out (a serving thread needs none). */
  config: Config
  /** The public port to listen on: the configured one, or the one the first thread was given for 0. */
  port: number
  /** Whether the operator's pages are forwarded to the control thread (no OPS_PORT). */
  forwardOps: boolean
}

/** A version handed to the threads, by publish number. */
export interface PublishedVersion {
  seq: number
  version: VersionMessage
}

/** A request for an operator's page, answered by the control thread's app. */
export interface ForwardedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  remoteAddress: string
}

/** A thread's request counts, as prom-client's JSON: what the control's scrape sums. */
export type MetricsJson = Array<MetricObjectWithValues<MetricValue<string>>>

export interface ForwardedAnswer {
  statusCode: number
  headers: OutgoingHttpHeaders
  body: Uint8Array
}

export type ToThread =
  /** The answer to `ready`: the version served now (null before the first), adopted before the thread listens. */
  | { type: 'listen', current: PublishedVersion | null }
  | { type: 'version', seq: number, version: VersionMessage }
  | { type: 'metrics', id: number }
  | { type: 'answer', id: number, answer: ForwardedAnswer }
  | { type: 'close' }

export type ToControl =
  /** Built and about to listen: from now on it is handed every version. */
  | { type: 'ready' }
  | { type: 'listening', port: number, address: string }
  | { type: 'failed', message: string, code: string | null }
  /** Serves version `seq` now; `letGo`: the version it served before, let go (null: none, or the same). */
  | { type: 'serving', seq: number, letGo: string | null }
  /** A version it let go has left its memory: the collector took its last view. */
  | { type: 'released', version: string }
  | { type: 'forward', id: number, request: ForwardedRequest }
  | { type: 'metrics', id: number, metrics: MetricsJson }
  | { type: 'closed' }
