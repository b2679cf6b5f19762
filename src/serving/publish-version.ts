// Publishing versions to the serving threads (ADR 029): a thread that says `ready` is told to listen with the
// version served then and is handed every later one; a publish resolves once every such thread serves it.
import type { FastifyBaseLogger } from 'fastify'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { PublishedVersion, ToThread } from './messages.js'
import { send, type Slot } from './thread-slot.js'
import { VersionDescriber } from './version-handoff.js'

/** A thread that has not said it serves a version by then is logged, and no longer waited for. */
const PUBLISH_TIMEOUT_MS = 10_000

export class VersionPublisher {
  private model: SnapshotModel | null = null
  /**
   * The last published version's message, kept for threads started later: the store retires (empties) a model
   * as soon as it swaps in the next, but the message's buffers stay valid.
   */
  private current: PublishedVersion | null = null
  private seq = 0
  private readonly describer = new VersionDescriber()
  /** Publishes waiting for threads to serve their version: each looks again when a thread serves or ends. */
  private readonly waiters = new Set<() => void>()

  constructor (private readonly slots: readonly Slot[], private readonly log: FastifyBaseLogger) {}

  /**
   * The answer to a thread's `ready`: the version served now goes with the word to listen, and every later one
   * after it, so that a thread never listens without it (its 503s), however a publish falls during its start.
   */
  follow (slot: Slot): void {
    slot.following = true
    send(slot, { type: 'listen', current: this.current })
  }

  /** The slot's thread serves version `seq`. */
  serves (slot: Slot, seq: number): void {
    slot.serving = seq
    this.recheck()
  }

  /** A thread ended: a publish no longer waits for it. */
  recheck (): void {
    for (const wake of this.waiters) wake()
  }

  /**
   * Hands `model` to every thread that said `ready`; resolves once each serves it (one that does not say so
   * within PUBLISH_TIMEOUT_MS is logged and not waited for). The same model again is nothing to do.
   */
  async publish (model: SnapshotModel): Promise<void> {
    if (model === this.model) return
    this.model = model
    const seq = ++this.seq
    this.current = { seq, version: this.describer.describe(model) }
    const message: ToThread = { type: 'version', ...this.current }
    for (const slot of this.slots) if (slot.following) send(slot, message)
    const done = (): boolean => this.slots.every(slot => !slot.following || slot.serving >= seq)
    if (done()) return
    await new Promise<void>(resolve => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake)
        const late = this.slots.filter(slot => slot.following && slot.serving < seq).map(slot => slot.threadId)
        this.log.warn(
          { threads: late, version: model.info.version },
          'serving threads did not say they serve the new version in time'
        )
        resolve()
      }, PUBLISH_TIMEOUT_MS)
      const wake = (): void => {
        if (!done()) return
        clearTimeout(timer)
        this.waiters.delete(wake)
        resolve()
      }
      this.waiters.add(wake)
    })
  }

  /**
   * Whether the threads serve: every listening thread serves a version (a reload being handed over keeps
   * them ready: each serves the last one until it swaps), and at least one listens.
   */
  ready (): boolean {
    return this.slots.some(slot => slot.listening) && this.slots.every(slot => !slot.listening || slot.serving > 0)
  }

  /** The version the slot's thread serves, for the status: null unless it listens and serves the last published. */
  versionOf (slot: Slot): string | null {
    return slot.listening && slot.serving === this.seq ? this.model?.info.version ?? null : null
  }
}
