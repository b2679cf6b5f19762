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
  /** The version served now, adopted before the thread listens; null before the first. */
  version: { seq: number, version: VersionMessage } | null
}

/** A request for an operator's page, answered by the control thread's app. */
export interface ForwardedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  remoteAddress: string
}

export interface ForwardedAnswer {
  statusCode: number
  headers: OutgoingHttpHeaders
  body: Uint8Array
}

export type ToThread =
  | { type: 'version', seq: number, version: VersionMessage }
  | { type: 'metrics', id: number }
  | { type: 'answer', id: number, answer: ForwardedAnswer }
  | { type: 'close' }

export type ToControl =
  | { type: 'listening', port: number, address: string }
  | { type: 'failed', message: string, code: string | null }
  | { type: 'serving', seq: number }
  | { type: 'forward', id: number, request: ForwardedRequest }
  | { type: 'metrics', id: number, metrics: Array<MetricObjectWithValues<MetricValue<string>>> }
  | { type: 'closed' }
