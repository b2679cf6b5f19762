// Where a load's batches are parsed: a lasting pool of threads for a large file (ADRs 008, 022), else inline.
import { EventEmitter } from 'node:events'
import { availableParallelism } from 'node:os'
import { Piscina, type PiscinaTask } from 'piscina'

import { parseBatch, type BatchTask, type ParsedBatch } from './parse-batch.js'
import { ItemBytes } from '../model/item-bytes.js'
import { memoryPolicy, type MemoryPolicy } from '../memory-policy.js'

// Types piscina does not export by name.
type Balancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>
type PiscinaWorker = Parameters<Balancer>[1][number]

/** Below it, a file's whole parse is a few hundred ms. */
export const THREADS_FROM_BYTES = 16 * 1024 * 1024
/** A few thousand items, a few tens of ms of a thread's work. */
export const THREAD_BATCH_BYTES = 4 * 1024 * 1024
/** 1 MiB held the loop 20–23 ms under load at 1M (ADRs 008, 026). */
export const INLINE_BATCH_BYTES = 256 * 1024
/** Served JSON is about as long as its line, so 2× never grows. */
export const SCRATCH_BYTES = 2 * THREAD_BATCH_BYTES
/** Beyond it the loading thread's reading and merging are the limit. */
const MAX_THREADS = 4
/** The one it parses and the next, not waiting on the busy loading thread (ADR 022). */
const BATCHES_PER_THREAD = 2
/** Idle threads then give back their heaps (~35 MB each); a burst of saves finds them warm (ADR 022). */
const POOL_IDLE_MS = 30_000

// Tests run the TypeScript source.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js', import.meta.url)

export interface ParseWorkerData {
  policy: MemoryPolicy
}

interface PoolStatus {
  threads: number
  /** Loads parsed inline because the threads could not start. */
  fallbacks: number
  failure: string | null
}

export interface BatchParser {
  /** The bytes must be an ArrayBuffer of their own: they move to the thread and back. */
  parse: (task: BatchTask) => Promise<ParsedBatch>
  /** Batches in flight: each thread has the next one waiting. */
  readonly depth: number
  readonly threads: number
  /** Whatever the outcome: the threads may give back what the load left in their heaps. */
  done: () => void
}

/** A batch (a few ms) per turn of the event loop. */
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
  threads?: number
  /** Tests give one that fails. */
  script?: URL
  idleMs?: number
}

/** Started at the first large load; idle threads hold no core and do not keep the process open. */
export class ParsePool extends EventEmitter<{ threads: [number] }> {
  private pool: Piscina | null = null
  private started: Promise<boolean> | null = null
  private readonly size: number
  private readonly script: URL
  private readonly idleMs: number
  private failure: string | null = null
  private fallbacks = 0
  /** Threads the current load may keep busy: one fewer while a snapshot is served. */
  private lanes: number
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

  /** While serving, a core is left to requests (ADR 008). `onFallback` hears why, once per pool. */
  async parserFor (bytes: number, serving: boolean, onFallback?: (reason: string) => void): Promise<BatchParser> {
    if (bytes < THREADS_FROM_BYTES || this.size === 0) return new InlineParser()
    if (!await this.start()) {
      this.fallbacks++
      if (this.fallbacks === 1) onFallback?.(this.failure as string)
      return new InlineParser()
    }
    // The store loads one file at a time, so a load's lanes are the pool's.
    this.lanes = Math.max(1, serving ? this.size - 1 : this.size)
    return new PoolLanes(this, this.pool as Piscina, this.lanes, this.size)
  }

  /** A later large load starts them again. */
  async close (): Promise<void> {
    const pool = this.pool
    this.pool = null
    this.started = null
    await pool?.destroy()
  }

  /** Rejected too when any thread fails outside a task meanwhile. */
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
    // Else a thread failing outside a task (dist/ replaced under the service) leaves its task waiting for good.
    pool.on('error', (error: Error) => { for (const fail of [...this.inFlight]) fail(error) })
    const count = (): void => { this.emit('threads', pool.threads.length) }
    pool.on('workerCreate', count)
    // Told after piscina has let the thread go.
    pool.on('workerDestroy', () => { setImmediate(count) })
    try {
      // A thread that cannot load its code is found here, not mid-load.
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
   * Null: queued or a thread started. A batch queues behind a busy one once the lanes are full (ADR 022). The pool's
   * own tasks (`ready`, `rest`) go only to an idle thread: one a thread, or the start check and `rest` miss threads.
   */
  private threadFor (task: PiscinaTask, workers: PiscinaWorker[]): PiscinaWorker | null {
    const idle = workers.find(worker => worker.currentUsage === 0) ?? null
    if (task.name !== 'default') return idle
    const busy = workers.filter(worker => worker.currentUsage > 0)
    if (busy.length < this.lanes) {
      if (idle !== null) return idle
      // An idle thread exited: piscina starts one.
      if (workers.length < this.size) return null
    }
    return busy.find(worker => worker.currentUsage < BATCHES_PER_THREAD) ?? null
  }
}

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

  /** All idle now, so each `rest` task lands on a thread of its own (ADR 022). */
  done (): void {
    if (!memoryPolicy().restingParseThreads) return
    for (let i = 0; i < this.size; i++) this.owner.run(this.pool, null, { name: 'rest' }).catch(() => {})
  }

  async parse (task: BatchTask): Promise<ParsedBatch> {
    try {
      return await this.owner.run(this.pool, task, { transferList: [task.bytes.buffer as ArrayBuffer] }) as ParsedBatch
    } catch (error) {
      // No `code`: the store reports it as the service's failure, not the editor's.
      throw new Error(`a parse thread failed: ${(error as Error).message}`)
    }
  }
}

export const parsePool = new ParsePool()
