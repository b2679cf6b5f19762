// The control thread's serving threads (WORKERS > 1, ADR 029): started on the public port, restarted when one
// dies, drained on shutdown. Publishing (publish-version.ts), the counts asked at a scrape (thread-metrics.ts) and
// the operator's pages they forward (forward-ops.ts) are wired to each thread's messages here.
import { Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { answerForwarded, type ForwardOps } from './forward-ops.js'
import type { MetricsJson, ThreadStart, ToControl, ToThread } from './messages.js'
import { VersionPublisher } from './publish-version.js'
import { ThreadMetrics } from './thread-metrics.js'
import { emptySlot, type Slot } from './thread-slot.js'

const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './serving-thread.ts' : './serving-thread.js', import.meta.url)
/** A thread that dies is started again after a pause that doubles while it keeps dying, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 30_000
/** A thread that lived this long is stable: the next death restarts it after the first pause again. */
const STABLE_MS = 60_000
/**
 * Each serving thread's young generation: 16 MiB semi-spaces, Node 20's default. Node 24 sizes them by the
 * machine's memory (64 MiB here): each thread then held ~130 MB of new space under load (ADR 034).
 */
const YOUNG_GENERATION_MB = 48

export interface ServingPoolOptions {
  log: FastifyBaseLogger
  forward: ForwardOps
  /** The simulated trouble's seed, the same in every thread; null when there is no trouble. */
  chaosSeed: number | null
}

/** One serving thread, as the status shows it. */
export interface ServingThreadRow {
  id: number
  threadId: number
  /** The version it serves; null before its first. */
  version: string | null
  since: string
  restarts: number
  lettingGo: string[]
}

export class ServingPool {
  private readonly slots: Slot[] = []
  private port = 0
  private closing = false
  private readonly versions: VersionPublisher
  private readonly counts = new ThreadMetrics(this.slots)

  constructor (private readonly config: Config, readonly size: number, private readonly options: ServingPoolOptions) {
    this.versions = new VersionPublisher(this.slots, options.log)
  }

  /**
   * Starts every thread on the public port and resolves with it once all listen; the first alone for port 0,
   * so that the others bind the port it was given. Rejects when one cannot listen.
   */
  async start (): Promise<number> {
    this.port = this.config.port
    for (let id = 0; id < this.size; id++) {
      const slot = emptySlot(id, FIRST_BACKOFF_MS)
      this.slots.push(slot)
      const port = await this.run(slot)
      this.port = port
    }
    return this.port
  }

  /** Starts `slot`'s thread; resolves with its port once it listens, rejects if it cannot. */
  private async run (slot: Slot): Promise<number> {
    const forwardOps = this.config.opsPort === null
    const start: ThreadStart = { config: this.threadConfig(), port: this.port, forwardOps }
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
            // Closing: the thread has its `close` already, and is not told to listen.
            if (!this.closing) this.versions.follow(slot)
            break
          case 'listening':
            slot.listening = true
            resolve(message.port)
            break
          case 'failed':
            // Its code (EADDRINUSE…) kept: serve.ts says what to do about it.
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
          case 'closed':
            break
        }
      })
      worker.on('error', error => {
        this.options.log.error({ err: error, thread: slot.threadId }, 'a serving thread failed')
      })
      worker.on('exit', code => {
        slot.worker = null
        // An isolate that ended holds nothing.
        slot.lettingGo = []
        slot.following = false
        slot.listening = false
        this.counts.keep(slot)
        this.versions.recheck()
        reject(new Error(`a serving thread stopped (exit code ${code}) before it listened`))
        if (this.closing) return
        this.options.log.error({ thread: slot.threadId, code }, 'a serving thread stopped; starting another')
        const lived = Date.now() - slot.since.getTime()
        // The first pause is FIRST_BACKOFF_MS (again after a stable run); each death in a row doubles the next.
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

  /** The configuration a thread gets: its secrets left out, the trouble's seed the control's. */
  private threadConfig (): Config {
    return {
      ...this.config,
      opsToken: null,
      snapshotHttpHeaders: null,
      snapshotUrl: null,
      chaosSeed: this.options.chaosSeed ?? this.config.chaosSeed
    }
  }

  /** Hands `model` to every thread; resolves once each serves it, or after 10 s (publish-version.ts). */
  async publish (model: SnapshotModel): Promise<void> {
    await this.versions.publish(model)
  }

  /** Whether the threads serve: at least one listens, and every one listening serves a version. */
  ready (): boolean {
    return this.versions.ready()
  }

  /** Every thread's request counts, for the control's scrape to sum (thread-metrics.ts). */
  async metrics (): Promise<MetricsJson[]> {
    return await this.counts.collect()
  }

  /** The threads and what each serves, for the status. */
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

  /** Whether a thread still holds a version it let go: memory on its way out, as the memory budget waits for. */
  lettingGo (): boolean {
    return this.slots.some(slot => slot.lettingGo.length > 0)
  }

  /**
   * Stops every thread's listener and resolves once each has finished its requests in flight and ended;
   * one still running just before the grace period ends is terminated, so that the control closes too.
   */
  async close (): Promise<void> {
    this.closing = true
    const graceMs = Math.max(1000, this.config.shutdownGraceMs - 500)
    await Promise.all(this.slots.map(async slot => {
      const worker = slot.worker
      if (worker === null) return
      const ended = new Promise<void>(resolve => worker.once('exit', () => resolve()))
      worker.postMessage({ type: 'close' } satisfies ToThread)
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<'late'>(resolve => { timer = setTimeout(() => resolve('late'), graceMs) })
      if (await Promise.race([ended, late]) === 'late') {
        this.options.log.error({ thread: slot.threadId }, 'a serving thread did not close in time: terminated')
        await worker.terminate()
      }
      clearTimeout(timer)
    }))
  }
}
