// The control thread's serving threads (WORKERS > 1, ADR 029): started, restarted with backoff, drained on close.
import { once } from 'node:events'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { JournalPart } from '../http/request-journal.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { answerForwarded, type ForwardOps } from './forward-ops.js'
import type { MetricsJson, ThreadStart, ToControl, ToThread } from './messages.js'
import { VersionPublisher } from './publish-version.js'
import { ThreadJournals } from './thread-journals.js'
import { ThreadMetrics } from './thread-metrics.js'
import { emptySlot, type Slot } from './thread-slot.js'
import { settledWithin } from '../settled-within.js'

const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './serving-thread.ts' : './serving-thread.js', import.meta.url)
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 30_000
/** A thread that lived this long restarts after the first pause again. */
const STABLE_MS = 60_000
/**
 * A young generation of 16 MiB semi-spaces, Node 20's default; Node 24's 64 MiB ones held ~130 MB per thread under
 * load (ADR 034).
 */
const YOUNG_GENERATION_MB = 48

export interface ServingPoolOptions {
  log: FastifyBaseLogger
  forward: ForwardOps
  /** The same in every thread; null without trouble. */
  chaosSeed: number | null
  /** The trouble's askings of each request, shared by every thread (ADR 041); null without trouble. */
  askings: SharedArrayBuffer | null
}

/** One serving thread, as the status shows it. */
export interface ServingThreadRow {
  id: number
  threadId: number
  version: string | null
  since: string
  restarts: number
  lettingGo: string[]
}

export class ServingPool {
  private readonly slots: Slot[] = []
  private port = 0
  /** The port, held without reusePort until the first thread is about to bind it. */
  private claim: Server | null = null
  private closing = false
  private readonly versions: VersionPublisher
  private readonly counts = new ThreadMetrics(this.slots)
  private readonly journals = new ThreadJournals(this.slots)

  constructor (private readonly config: Config, readonly size: number, private readonly options: ServingPoolOptions) {
    this.versions = new VersionPublisher(this.slots, options.log)
  }

  /** The port claimed, then one thread at a time: the first thread's failure to listen is the start's. */
  async start (): Promise<number> {
    this.claim = await claimPort(this.config.port, this.config.host)
    this.port = (this.claim.address() as AddressInfo).port
    for (let id = 0; id < this.size; id++) {
      const slot = emptySlot(id, FIRST_BACKOFF_MS)
      this.slots.push(slot)
      await this.run(slot)
    }
    return this.port
  }

  private async run (slot: Slot): Promise<number> {
    const forwardOps = this.config.opsPort === null
    const start: ThreadStart = {
      config: this.threadConfig(), port: this.port, forwardOps, id: slot.id, askings: this.options.askings
    }
    const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB }
    const worker = new Worker(ENTRY, { workerData: start, resourceLimits })
    slot.worker = worker
    slot.threadId = worker.threadId
    slot.since = new Date()
    slot.serving = 0
    slot.following = false
    slot.listening = false
    return await new Promise<number>((resolve, reject) => {
      worker.on('message', (message: ToControl) => {
        switch (message.type) {
          case 'ready':
            // Closing: it has its `close` already. The claim let go only now: a thread's start takes ~0.3 s.
            if (!this.closing) this.letClaimGo().then(() => { if (!this.closing) this.versions.follow(slot) }, () => {})
            break
          case 'listening':
            slot.listening = true
            resolve(message.port)
            break
          case 'failed':
            // The code (EADDRINUSE…) is for serve.ts's advice.
            reject(Object.assign(new Error(`a serving thread cannot listen on port ${this.port}: ${message.message}`), { code: message.code }))
            break
          case 'serving':
            if (message.letGo !== null) slot.lettingGo.push(message.letGo)
            this.versions.serves(slot, message.seq)
            break
          case 'released':
            slot.lettingGo = slot.lettingGo.filter(version => version !== message.version)
            break
          case 'forward':
            answerForwarded(worker, message.id, message.request, this.options.forward)
            break
          case 'metrics':
            this.counts.answer(message.id, message.metrics)
            break
          case 'journal':
            this.journals.answer(message.id, message.part)
            break
          case 'closed':
            break
        }
      })
      worker.on('error', error => {
        this.options.log.error({ err: error, thread: slot.threadId }, 'a serving thread failed')
      })
      worker.on('exit', code => {
        slot.worker = null
        slot.lettingGo = []
        slot.following = false
        slot.listening = false
        this.counts.keep(slot)
        this.versions.recheck()
        reject(new Error(`a serving thread stopped (exit code ${code}) before it listened`))
        if (this.closing) return
        this.options.log.error({ thread: slot.threadId, code }, 'a serving thread stopped; starting another')
        const lived = Date.now() - slot.since.getTime()
        const pause = lived >= STABLE_MS ? FIRST_BACKOFF_MS : slot.backoffMs
        slot.backoffMs = Math.min(MAX_BACKOFF_MS, pause * 2)
        setTimeout(() => {
          if (this.closing) return
          slot.restarts++
          this.run(slot).catch((error: unknown) => {
            this.options.log.error({ err: error }, 'a serving thread could not be started again')
          })
        }, pause).unref()
      })
    })
  }

  /** Secrets left out; the control's trouble seed. */
  private threadConfig (): Config {
    return {
      ...this.config,
      opsToken: null,
      snapshotHttpHeaders: null,
      snapshotUrl: null,
      chaosSeed: this.options.chaosSeed ?? this.config.chaosSeed
    }
  }

  async publish (model: SnapshotModel): Promise<void> {
    await this.versions.publish(model)
  }

  ready (): boolean {
    return this.versions.ready()
  }

  async metrics (): Promise<MetricsJson[]> {
    return await this.counts.collect()
  }

  /** Every serving thread's request journal (GET /-/requests); `reset`: forgotten first (DELETE). */
  async journalParts (reset: boolean): Promise<JournalPart[]> {
    return await this.journals.collect(reset)
  }

  rows (): ServingThreadRow[] {
    return this.slots.map(slot => ({
      id: slot.id,
      threadId: slot.threadId,
      version: this.versions.versionOf(slot),
      since: slot.since.toISOString(),
      restarts: slot.restarts,
      lettingGo: [...slot.lettingGo]
    }))
  }

  /** Memory still on its way out, which the memory budget waits for. */
  lettingGo (): boolean {
    return this.slots.some(slot => slot.lettingGo.length > 0)
  }

  private async letClaimGo (): Promise<void> {
    const claim = this.claim
    this.claim = null
    if (claim !== null) await new Promise(resolve => claim.close(resolve))
  }

  /** Drains every thread; one still running just before the grace period ends is terminated. */
  async close (): Promise<void> {
    this.closing = true
    await this.letClaimGo()
    const graceMs = Math.max(1000, this.config.shutdownGraceMs - 500)
    await Promise.all(this.slots.map(async slot => {
      const worker = slot.worker
      if (worker === null) return
      const ended = new Promise<void>(resolve => worker.once('exit', () => resolve()))
      worker.postMessage({ type: 'close' } satisfies ToThread)
      if (!await settledWithin(ended, graceMs)) {
        this.options.log.error({ thread: slot.threadId }, 'a serving thread did not close in time: terminated')
        await worker.terminate()
      }
    }))
  }
}

/**
 * The port bound without reusePort: taken by anyone, even another replica's threads, it is EADDRINUSE here, where
 * reusePort alone would have joined them (ADR 029); port 0 becomes the one the threads share. A connection that
 * comes meanwhile is reset, as none would be served yet.
 */
async function claimPort (port: number, host: string): Promise<Server> {
  const claim = createServer(socket => { socket.destroy() })
  // `once` rejects with the 'error' (EADDRINUSE…) that comes instead.
  await once(claim.listen(port, host), 'listening')
  return claim
}
