// Where a load's per-item work runs: a large file's batches on a lasting piscina pool of parse threads (ADRs
// 008, 022), a small file's on the loading thread; if the threads cannot start, there too, logged and counted.
import { EventEmitter } from 'node:events'
import { availableParallelism } from 'node:os'
import { Piscina, type PiscinaTask } from 'piscina'

import { parseBatch, type BatchTask, type ParsedBatch } from './parse-batch.js'
import { ItemBytes } from '../model/item-bytes.js'
import { memoryPolicy, type MemoryPolicy } from '../memory-policy.js'

/** piscina's balancer, and what it is shown of a thread (types piscina does not export by name). */
type Balancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>
type PiscinaWorker = Parameters<Balancer>[1][number]

/** Files from this size are parsed on the pool: below it, a file's whole parse is a few hundred ms. */
export const THREADS_FROM_BYTES = 16 * 1024 * 1024
/** Bytes of a pool thread's batch: a few thousand items, a few tens of ms of its work. */
export const THREAD_BATCH_BYTES = 4 * 1024 * 1024
/** Bytes of a batch parsed on the loading thread: 1 MiB held the loop 20–23 ms under load at 1M (ADR 026). */
export const INLINE_BATCH_BYTES = 256 * 1024
/** A thread's render buffer, reused for every batch; served JSON is about as long as its line, so 2× never grows. */
export const SCRATCH_BYTES = 2 * THREAD_BATCH_BYTES
/** More threads than this gain little: the loading thread's reading and merging become the limit. */
const MAX_THREADS = 4
/** A thread's batches at once: the one it parses and the next, not waiting on the busy loading thread (ADR 022). */
const BATCHES_PER_THREAD = 2
/** Idle threads exit after this, giving back their heaps (~35 MB each); a burst of saves finds them warm (ADR 022). */
const POOL_IDLE_MS = 30_000

// Built code runs parse-worker.js; tests run the TypeScript source, through the loader they run under.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js', import.meta.url)

/** What a parse thread is started with. */
export interface ParseWorkerData {
  policy: MemoryPolicy
}

/** How the pool stands, for the metrics and the log. */
interface PoolStatus {
  /** Threads running now (0 before the first large load, when idle ones have exited, or after a fallback). */
  threads: number
  /** Loads that fell back to the loading thread because the threads could not start. */
  fallbacks: number
  /** Why the threads could not start, or null. */
  failure: string | null
}

/** What one load parses its batches with, and how many it keeps in flight. */
export interface BatchParser {
  /** Checks and renders a batch. Its bytes must be an ArrayBuffer of their own: they move to the thread and back. */
  parse: (task: BatchTask) => Promise<ParsedBatch>
  /** Batches worth having in flight: each thread has the next one waiting when it finishes one. */
  readonly depth: number
  /** The threads this load uses; 0 on the loading thread. */
  readonly threads: number
  /** The load is over (whatever its outcome): the threads may give back what it left in their heaps. */
  done: () => void
}

/** Parses on the loading thread, a batch per turn of the event loop (a small file's batch: a few ms). */
class InlineParser implements BatchParser {
  readonly depth = 1
  readonly threads = 0
  private readonly scratch = new ItemBytes(2 * INLINE_BATCH_BYTES)

  async parse (task: BatchTask): Promise<ParsedBatch> {
    await new Promise(resolve => setImmediate(resolve))
    return parseBatch(task, this.scratch)
  }

  done (): void {}
}

interface ParsePoolOptions {
  /** Threads to run; by default one per core, up to MAX_THREADS. */
  threads?: number
  /** The threads' code (tests give one that fails). */
  script?: URL
  idleMs?: number
}

/**
 * The process's parse threads, started at the first large load and kept while loads come: idle, they hold no
 * core and do not keep the process open. Emits `threads` (the count running) when one starts or exits.
 */
export class ParsePool extends EventEmitter<{ threads: [number] }> {
  private pool: Piscina | null = null
  private started: Promise<boolean> | null = null
  private readonly size: number
  private readonly script: URL
  private readonly idleMs: number
  private failure: string | null = null
  private fallbacks = 0
  /** Threads the current load may keep busy (its lanes): fewer than all while a snapshot is served. */
  private lanes: number
  /** How to fail each task in flight, should a thread fail outside one. */
  private readonly inFlight = new Set<(error: Error) => void>()

  constructor (options: ParsePoolOptions = {}) {
    super()
    this.size = options.threads ?? Math.min(availableParallelism(), MAX_THREADS)
    this.script = options.script ?? WORKER
    this.idleMs = options.idleMs ?? POOL_IDLE_MS
    this.lanes = this.size
  }

  status (): PoolStatus {
    return { threads: this.pool?.threads.length ?? 0, fallbacks: this.fallbacks, failure: this.failure }
  }

  /**
   * A parser for one load: the pool from THREADS_FROM_BYTES, with one thread fewer while a snapshot is served
   * (the core left answers requests: ADR 008), else the loading thread. `onFallback` hears why, once per pool.
   */
  async parserFor (bytes: number, serving: boolean, onFallback?: (reason: string) => void): Promise<BatchParser> {
    if (bytes < THREADS_FROM_BYTES || this.size === 0) return new InlineParser()
    if (!await this.start()) {
      this.fallbacks++
      if (this.fallbacks === 1) onFallback?.(this.failure as string)
      return new InlineParser()
    }
    // One load at a time uses the pool (the store loads one file after another): its lanes are the pool's.
    this.lanes = Math.max(1, serving ? this.size - 1 : this.size)
    return new PoolLanes(this, this.pool as Piscina, this.lanes, this.size)
  }

  /** Stops the threads (the service closing); a later large load starts them again. */
  async close (): Promise<void> {
    const pool = this.pool
    this.pool = null
    this.started = null
    await pool?.destroy()
  }

  /** Runs a task on `pool`; rejected too when any thread fails outside a task meanwhile. */
  async run (pool: Piscina, task: unknown, options: Parameters<Piscina['run']>[1]): Promise<unknown> {
    return await new Promise((resolve, reject) => {
      const fail = (error: Error): void => {
        this.inFlight.delete(fail)
        reject(error)
      }
      this.inFlight.add(fail)
      pool.run(task, options).then(value => {
        this.inFlight.delete(fail)
        resolve(value)
      }, fail)
    })
  }

  /** Starts the threads once; false when they could not (the reason in `failure`). */
  private async start (): Promise<boolean> {
    this.started ??= this.startThreads()
    return await this.started
  }

  private async startThreads (): Promise<boolean> {
    const workerData: ParseWorkerData = { policy: { ...memoryPolicy() } }
    let pool: Piscina
    try {
      pool = new Piscina({
        filename: this.script.href,
        minThreads: 0,
        maxThreads: this.size,
        idleTimeout: this.idleMs,
        workerData,
        concurrentTasksPerWorker: BATCHES_PER_THREAD,
        loadBalancer: (task, workers) => this.threadFor(task, workers)
      })
    } catch (error) {
      this.failure = (error as Error).message
      return false
    }
    // A thread failing outside a task (a dist/ replaced under a running service) would leave piscina's task
    // waiting for good, and the load with it: every task in flight fails instead.
    pool.on('error', (error: Error) => { for (const fail of [...this.inFlight]) fail(error) })
    const count = (): void => { this.emit('threads', pool.threads.length) }
    pool.on('workerCreate', count)
    // Told after piscina has let the thread go.
    pool.on('workerDestroy', () => { setImmediate(count) })
    try {
      // Every thread loads its code before the first batch: one that cannot is found here, not mid-load.
      await Promise.all(Array.from({ length: this.size }, async () =>
        await this.run(pool, null, { name: 'ready' })))
    } catch (error) {
      this.failure = (error as Error).message
      await pool.destroy().catch(() => {})
      return false
    }
    this.pool = pool
    return true
  }

  /**
   * piscina's balancer (null: queued, or a thread started). A batch goes to an idle thread while the load has a
   * lane free, else behind a busy thread's batch, to start without a turn of the loading thread (ADR 022).
   * The pool's own tasks (`ready`, `rest`) go one a thread, each to an idle one.
   */
  private threadFor (task: PiscinaTask, workers: PiscinaWorker[]): PiscinaWorker | null {
    const idle = workers.find(worker => worker.currentUsage === 0) ?? null
    if (task.name !== 'default') return idle
    const busy = workers.filter(worker => worker.currentUsage > 0)
    if (busy.length < this.lanes) {
      if (idle !== null) return idle
      // A lane with no thread yet (an idle one exited): piscina starts one for this batch.
      if (workers.length < this.size) return null
    }
    return busy.find(worker => worker.currentUsage < BATCHES_PER_THREAD) ?? null
  }
}

/** One load's use of the pool: `threads` lanes, each with its next batch queued on its thread. */
class PoolLanes implements BatchParser {
  readonly depth: number

  constructor (
    private readonly owner: ParsePool,
    private readonly pool: Piscina,
    readonly threads: number,
    private readonly size: number
  ) {
    this.depth = BATCHES_PER_THREAD * threads
  }

  /** One `rest` task a thread: each runs on a thread of its own, all being idle now (ADR 022). */
  done (): void {
    if (!memoryPolicy().restingParseThreads) return
    for (let i = 0; i < this.size; i++) this.owner.run(this.pool, null, { name: 'rest' }).catch(() => {})
  }

  async parse (task: BatchTask): Promise<ParsedBatch> {
    try {
      return await this.owner.run(this.pool, task, { transferList: [task.bytes.buffer as ArrayBuffer] }) as ParsedBatch
    } catch (error) {
      // A thread's failure is the service's (a file's problems come back as problems): with no `code`, the
      // store reports it as unexpected, not as the editor's.
      throw new Error(`a parse thread failed: ${(error as Error).message}`)
    }
  }
}

/** The process's pool: one for every load, whichever store or command asks. */
export const parsePool = new ParsePool()
