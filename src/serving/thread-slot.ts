// A place in the serving pool (ADR 029), handed with its restarts to the thread that replaces a dead one.
import type { Worker } from 'node:worker_threads'
import type { ToThread } from './messages.js'

export interface Slot {
  id: number
  worker: Worker | null
  threadId: number
  since: Date
  restarts: number
  backoffMs: number
  /** Publish number; 0 for none. */
  serving: number
  /** From its `ready` on, handed every version. */
  following: boolean
  listening: boolean
  /** Not yet collected (ADR 034). */
  lettingGo: string[]
}

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

export function send (slot: Slot, message: ToThread): void {
  slot.worker?.postMessage(message)
}
