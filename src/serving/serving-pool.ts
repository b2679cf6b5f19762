// The control thread's serving threads (WORKERS > 1, ADR 029): started on the public port, handed every version,
// asked for counts at a scrape, answered when they forward, restarted when one dies, drained on shutdown.
import { Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client'
import type { Config } from '../config.js'
import { controlUnavailable } from '../errors.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { ForwardedAnswer, ForwardedRequest, PublishedVersion, ThreadStart, ToControl, ToThread } from './messages.js'
import { VersionDescriber } from './version-handoff.js'

const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './serving-thread.ts' : './serving-thread.js', import.meta.url)
/** A thread that has not said it serves a version by then is logged, and no longer waited for. */
const PUBLISH_TIMEOUT_MS = 10_000
/** How long a scrape waits for a thread's counts. */
const METRICS_TIMEOUT_MS = 2_000
/** A thread that dies is started again after a pause that doubles while it keeps dying, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 30_000
/** A thread that lived this long is stable: the next death restarts it after the first pause again. */
const STABLE_MS = 60_000

export interface ServingPoolOptions {
  log: FastifyBaseLogger
  /** Answers an operator's page forwarded by a thread (the control app's `inject`). */
  forward: (request: ForwardedRequest) => Promise<{
    statusCode: number, headers: ForwardedAnswer['headers'], rawPayload: Buffer
  }>
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
}

interface Slot {
  id: number
  worker: Worker | null
  threadId: number
  since: Date
  restarts: number
  backoffMs: number
  /** The last version it said it serves, by publish number; 0 for none. */
  serving: number
  /** Handed every version: from its `ready`, so that it never listens without the one served then. */
  following: boolean
  listening: boolean
  /** Its counts at the last scrape: what a slow thread answers, and what a dead one leaves behind. */
  lastMetrics: ThreadMetrics | null
}

type ThreadMetrics = Array<MetricObjectWithValues<MetricValue<string>>>

export class ServingPool {
  private readonly slots: Slot[] = []
  private port = 0
  private model: SnapshotModel | null = null
  /**
   * The last published version's message, kept for threads started later: the store retires (empties) a model
   * as soon as it swaps in the next, but the message's buffers stay valid.
   */
  private current: PublishedVersion | null = null
  private seq = 0
  private readonly describer = new VersionDescriber()
  private closing = false
  private readonly waiters = new Set<() => void>()
  private readonly metricsAsked =
    new Map<number, (metrics: Array<MetricObjectWithValues<MetricValue<string>>>) => void>()

  private lastMetricsId = 0

  constructor (private readonly config: Config, readonly size: number, private readonly options: ServingPoolOptions) {}

  /**
   * Starts every thread on the public port and resolves with it once all listen; the first alone for port 0,
   * so that the others bind the port it was given. Rejects when one cannot listen.
   */
  async start (): Promise<number> {
    this.port = this.config.port
    for (let id = 0; id < this.size; id++) {
      const slot: Slot = {
        id,
        worker: null,
        threadId: 0,
        since: new Date(),
        restarts: 0,
        backoffMs: FIRST_BACKOFF_MS,
        serving: 0,
        following: false,
        listening: false,
        lastMetrics: null
      }
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
    const worker = new Worker(ENTRY, { workerData: start })
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
            if (this.closing) break
            // The version served now goes with the word to listen, and every later one after it: a thread
            // never listens without it (its 503s), however a publish falls during its start.
            slot.following = true
            this.send(slot, { type: 'listen', current: this.current })
            break
          case 'listening':
            slot.listening = true
            resolve(message.port)
            break
          case 'failed':
            reject(new Error(`a serving thread cannot listen on port ${this.port}: ${message.message}`))
            break
          case 'serving':
            slot.serving = message.seq
            for (const wake of this.waiters) wake()
            break
          case 'forward':
            this.answer(worker, message.id, message.request)
            break
          case 'metrics':
            this.metricsAsked.get(message.id)?.(message.metrics)
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
        slot.following = false
        slot.listening = false
        this.keepCounts(slot)
        for (const wake of this.waiters) wake()
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

  private send (slot: Slot, message: ToThread): void {
    slot.worker?.postMessage(message)
  }

  /** Answers a forwarded request to the thread that asked: not a thread started after it in its place. */
  private answer (worker: Worker, id: number, request: ForwardedRequest): void {
    const reply = (answer: ForwardedAnswer): void => {
      worker.postMessage({ type: 'answer', id, answer } satisfies ToThread)
    }
    this.options.forward(request).then(
      ({ statusCode, headers, rawPayload }) => { reply({ statusCode, headers, body: rawPayload }) },
      () => {
        // The control closing (inject refuses then): the 503 a closing server gives.
        const refusal = controlUnavailable()
        reply({
          statusCode: refusal.statusCode,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: Buffer.from(JSON.stringify(refusal.body))
        })
      }
    )
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
    for (const slot of this.slots) if (slot.following) this.send(slot, message)
    const done = (): boolean => this.slots.every(slot => !slot.following || slot.serving >= seq)
    if (done()) return
    await new Promise<void>(resolve => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake)
        const late = this.slots.filter(slot => slot.following && slot.serving < seq).map(slot => slot.threadId)
        this.options.log.warn(
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

  /**
   * Every thread's request counts (prom-client's JSON), for the control's scrape to sum: a thread slow to
   * answer gives its last, and threads that ended their counts at their last scrape, so that no counter of
   * the sum goes down (Prometheus would read a reset).
   */
  async metrics (): Promise<ThreadMetrics[]> {
    const live = await Promise.all(
      this.slots.filter(slot => slot.listening).map(async slot => await new Promise<ThreadMetrics>(resolve => {
        const id = ++this.lastMetricsId
        const timer = setTimeout(() => {
          this.metricsAsked.delete(id)
          resolve(slot.lastMetrics ?? [])
        }, METRICS_TIMEOUT_MS)
        this.metricsAsked.set(id, metrics => {
          clearTimeout(timer)
          this.metricsAsked.delete(id)
          slot.lastMetrics = metrics
          resolve(metrics)
        })
        this.send(slot, { type: 'metrics', id })
      }))
    )
    return [...live, await this.departed]
  }

  /** The counters of the threads that ended, summed into one: gauges (a lag) say nothing once a thread is gone. */
  private departed: Promise<ThreadMetrics> = Promise.resolve([])

  private keepCounts (slot: Slot): void {
    const last = slot.lastMetrics?.filter(metric =>
      String(metric.type) === 'counter' || String(metric.type) === 'histogram')
    slot.lastMetrics = null
    if (last === undefined || last.length === 0) return
    this.departed = this.departed.then(async departed =>
      await AggregatorRegistry.aggregate([departed, last]).getMetricsAsJSON() as ThreadMetrics)
  }

  /** The threads and what each serves, for the status. */
  rows (): ServingThreadRow[] {
    const version = this.model?.info.version ?? null
    return this.slots.map(slot => ({
      id: slot.id,
      threadId: slot.threadId,
      version: slot.listening && slot.serving === this.seq ? version : null,
      since: slot.since.toISOString(),
      restarts: slot.restarts
    }))
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
