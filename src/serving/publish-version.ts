// Publishing versions to the serving threads (ADR 029); a publish resolves once every following thread serves it.
import type { FastifyBaseLogger } from 'fastify'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { PublishedVersion, ToThread } from './messages.js'
import { send, type Slot } from './thread-slot.js'
import { VersionDescriber } from './version-handoff.js'

/** A thread slower than this is logged, not waited for. */
const PUBLISH_TIMEOUT_MS = 10_000

export class VersionPublisher {
  private model: SnapshotModel | null = null
  /** For threads started later: the store empties a model once swapped, but the message's buffers stay valid. */
  private current: PublishedVersion | null = null
  private seq = 0
  private readonly describer = new VersionDescriber()
  private readonly waiters = new Set<() => void>()

  constructor (private readonly slots: readonly Slot[], private readonly log: FastifyBaseLogger) {}

  /** The version goes with `listen`, so a thread never listens without one (its 503s), whenever a publish falls. */
  follow (slot: Slot): void {
    slot.following = true
    send(slot, { type: 'listen', current: this.current })
  }

  serves (slot: Slot, seq: number): void {
    slot.serving = seq
    this.recheck()
  }

  recheck (): void {
    for (const wake of this.waiters) wake()
  }

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

  /** A reload being handed over keeps threads ready: each serves the last version until it swaps. */
  ready (): boolean {
    return this.slots.some(slot => slot.listening) && this.slots.every(slot => !slot.listening || slot.serving > 0)
  }

  /** For the status: null unless it listens and serves the last published. */
  versionOf (slot: Slot): string | null {
    return slot.listening && slot.serving === this.seq ? this.model?.info.version ?? null : null
  }
}
