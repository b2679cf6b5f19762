// What the control thread and a serving thread say to each other over the thread's port (ADR 029).
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import type { MetricObjectWithValues, MetricValue } from 'prom-client'
import type { Config } from '../config.js'
import type { JournalPart } from '../http/request-journal.js'
import type { VersionMessage } from './version-handoff.js'

/** A serving thread's workerData. */
export interface ThreadStart {
  /** Secrets left out. */
  config: Config
  /** For port 0, the one the first thread was given. */
  port: number
  /** No OPS_PORT: the operator's pages are forwarded to the control. */
  forwardOps: boolean
  /** Its place in the pool, which the request journal names. */
  id: number
  /** The simulated trouble's askings of each request, one table for every thread (ADR 041); null without trouble. */
  askings: SharedArrayBuffer | null
}

export interface PublishedVersion {
  seq: number
  version: VersionMessage
}

export interface ForwardedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  remoteAddress: string
}

/** prom-client's JSON, summed by the control's scrape. */
export type MetricsJson = Array<MetricObjectWithValues<MetricValue<string>>>

export interface ForwardedAnswer {
  statusCode: number
  headers: OutgoingHttpHeaders
  body: Uint8Array
}

export type ToThread =
  /** The answer to `ready`: adopted before the thread listens. */
  | { type: 'listen', current: PublishedVersion | null }
  | { type: 'version', seq: number, version: VersionMessage }
  | { type: 'metrics', id: number }
  | { type: 'answer', id: number, answer: ForwardedAnswer }
  /** Its request journal; `reset`: forgotten first, and its trouble started over (DELETE /-/requests). */
  | { type: 'journal', id: number, reset: boolean }
  | { type: 'close' }

export type ToControl =
  /** From now on it is handed every version. */
  | { type: 'ready' }
  | { type: 'listening', port: number, address: string }
  | { type: 'failed', message: string, code: string | null }
  /** `letGo`: the version served before (null: none, or the same). */
  | { type: 'serving', seq: number, letGo: string | null }
  /** A version it let go has been collected. */
  | { type: 'released', version: string }
  | { type: 'forward', id: number, request: ForwardedRequest }
  | { type: 'metrics', id: number, metrics: MetricsJson }
  /** null: its journal is off. */
  | { type: 'journal', id: number, part: JournalPart | null }
  | { type: 'closed' }
