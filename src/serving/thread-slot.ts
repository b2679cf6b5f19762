// One place in the serving pool (ADR 029): the thread in it now and what the control knows of it. A thread that
// dies leaves its place, restarts and all, to the one started after it.
import type { Worker } from 'node:worker_threads'
import type { ToThread } from './messages.js'

export interface Slot {
  id: number
  worker: Worker | null
  threadId: number
  since: Date
  restarts: number
  /** The pause before the next thread is started in its place (serving-pool.ts). */
  backoffMs: number
  /** The last version it said it serves, by publish number; 0 for none. */
  serving: number
  /** Handed every version: from its `ready`, so that it never listens without the one served then. */
  following: boolean
  listening: boolean
  /** Versions it let go whose memory it has not yet seen collected (ADR 034). */
  lettingGo: string[]
}

/** A place with no thread started in it yet. */
export function emptySlot (id: number, backoffMs: number): Slot {
  return {
    id,
    worker: null,
    threadId: 0,
    since: new Date(),
    restarts: 0,
    backoffMs,
    serving: 0,
    following: false,
    listening: false,
    lettingGo: []
  }
}

/** Says `message` to the slot's thread, if one runs in it. */
export function send (slot: Slot, message: ToThread): void {
  slot.worker?.postMessage(message)
}
