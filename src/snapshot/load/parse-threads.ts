// Where a load's per-item work runs: on parse threads for a large file, so that the work of a million items
// (JSON.parse, the schema check, serializing: three quarters of a load's CPU) gets the machine's other
// cores, while the loading thread reads, digests and merges; on the loading thread itself for a small file,
// where starting threads would cost more than they save.
import { Worker } from 'node:worker_threads'
import { availableParallelism } from 'node:os'
import { parseBatch, type BatchTask, type ParsedBatch } from './parse-batch.js'
import { ItemBytes } from '../model/item-bytes.js'
import type { LoadOptions } from './load-options.js'
import { Pacer } from '../slices.js'

/** Files from this size get parse threads: a thread's start (~50 ms of a core) is small beside their load. */
export const THREADS_FROM_BYTES = 16 * 1024 * 1024
/** Bytes of a parse thread's batch: a few thousand items, a few tens of ms of its work. */
export const THREAD_BATCH_BYTES = 4 * 1024 * 1024
/** Bytes of a batch parsed on the loading thread: a few ms of its work between turns of the event loop. */
export const INLINE_BATCH_BYTES = 1024 * 1024
/**
 * The buffer a batch's items are rendered into, per thread, for all its batches. Served JSON is about as
 * long as the line it comes from: twice the batch leaves room, so it never grows (parse-worker.ts says why
 * a buffer freed during a load costs memory).
 */
export const SCRATCH_BYTES = 2 * THREAD_BATCH_BYTES
/** More threads than this gain little: the loading thread's reading and merging become the limit. */
const MAX_THREADS = 4

/**
 * Parse threads for a file of `bytes`: as many as the cores, up to MAX_THREADS; none for a small file. While
 * a snapshot is served (a reload), one core fewer, at least one: the core left answers the requests (on 2
 * cores, a reload of 1M items under load stalled the loop up to 52–55 ms with two threads; see BENCHMARKS.md).
 */
export function threadsFor (bytes: number, serving = false): number {
  if (bytes < THREADS_FROM_BYTES) return 0
  return Math.max(1, Math.min(availableParallelism() - (serving ? 1 : 0), MAX_THREADS))
}

// Built code runs parse-worker.js; tests run the TypeScript source, through the loader they run under.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js', import.meta.url)

/**
 * The memory batches are read or gathered into, reused: a batch's bytes come back with its result and take a
 * later batch. A buffer per batch, freed on another thread, left tens of MB of the C allocator's heap
 * resident for good at 1M items (BENCHMARKS.md, "Parse threads for JSON Lines").
 */
export class BatchMemory {
  private readonly spare: ArrayBuffer[] = []
  /** Every buffer holds at least a batch and a line carried into it, so that any spare one will do. */
  private readonly size: number

  constructor (batchBytes: number) {
    this.size = batchBytes + 64 * 1024
  }

  /** `bytes` of memory of its own (it moves to the thread that parses it). */
  take (bytes: number): Buffer {
    const at = this.spare.findIndex(buffer => buffer.byteLength >= bytes)
    if (at === -1) return Buffer.allocUnsafeSlow(Math.max(bytes, this.size)).subarray(0, bytes)
    return Buffer.from(this.spare.splice(at, 1)[0] as ArrayBuffer, 0, bytes)
  }

  /** Memory taken here, to take again: a parsed batch's `read`, or a buffer not sent. */
  give (bytes: Uint8Array): void {
    this.spare.push(bytes.buffer as ArrayBuffer)
  }
}

type Step = { parsed: Promise<ParsedBatch>, merge: (batch: ParsedBatch) => boolean | undefined } | (() => void)

/**
 * The batches sent to be parsed, merged into the load in the order they were sent, whichever thread
 * finishes first, with the loading thread's own effects (format v1's top-level members) in their place
 * among them: both loaders' reports keep the file's order this way.
 */
export class MergeQueue {
  private readonly steps: Step[] = []
  private readonly pacer = new Pacer()

  /** @param memory where each merged batch's read memory goes back, for the next batch */
  constructor (private readonly memory: BatchMemory) {}

  /** Batches and effects not yet merged or run. */
  get length (): number {
    return this.steps.length
  }

  /** A batch sent to be parsed, and what merges it in its turn (false: merge nothing more). */
  batch (parsed: Promise<ParsedBatch>, merge: (batch: ParsedBatch) => boolean | undefined): void {
    // Its failure handled here: a thread's failure rejects every batch in flight, and the load stops at
    // the first, leaving the others unawaited.
    parsed.catch(() => {})
    this.steps.push({ parsed, merge })
  }

  /** Runs `effect` in its turn: now, when nothing is queued. */
  effect (effect: () => void): void {
    if (this.steps.length === 0) effect()
    else this.steps.push(effect)
  }

  /** Merges the oldest until `left` are queued; false when a merge said to stop. */
  async mergeUntil (left: number): Promise<boolean> {
    while (this.steps.length > left) {
      const step = this.steps.shift() as Step
      if (typeof step === 'function') {
        step()
        continue
      }
      const batch = await step.parsed
      this.memory.give(batch.read)
      const go = step.merge(batch)
      // Batches that came back while this thread was answering requests are all ready at once: a turn of
      // the event loop between them, or merging them would hold it.
      if (this.pacer.due) await this.pacer.pause()
      if (go === false) return false
    }
    return true
  }
}

/**
 * A load's parser and its batches' size, for a file of `bytes`: the threads `options` ask for, or those
 * `threadsFor` gives; batches a thread's size, or a loading thread's (`readChunk` in tests).
 */
export function parserFor (bytes: number, options: LoadOptions): { parser: BatchParser, batchBytes: number } {
  const threads = options.threads ?? threadsFor(bytes, options.serving)
  return { parser: batchParser(threads), batchBytes: options.readChunk ?? (threads > 0 ? THREAD_BATCH_BYTES : INLINE_BATCH_BYTES) }
}

export interface BatchParser {
  /**
   * Checks and renders a batch. Its bytes must be an ArrayBuffer of their own: they move to the thread
   * that parses them, and come back with the result (`read`).
   */
  parse: (task: BatchTask) => Promise<ParsedBatch>
  /** Batches worth having in flight: each thread has the next one waiting when it finishes one. */
  readonly depth: number
  /** Stops the threads; batches in flight are dropped. */
  close: () => Promise<void>
}

/** `threads` parse threads, or the loading thread itself for 0; `script` is the threads' (tests make one fail). */
export function batchParser (threads: number, script: URL = WORKER): BatchParser {
  return threads > 0 ? new ThreadParser(threads, script) : new InlineParser()
}

/** Parses on the loading thread, a batch per turn of the event loop (a batch of a small file: a few ms). */
export class InlineParser implements BatchParser {
  readonly depth = 1
  private readonly scratch = new ItemBytes(2 * INLINE_BATCH_BYTES)

  async parse (task: BatchTask): Promise<ParsedBatch> {
    await new Promise(resolve => setImmediate(resolve))
    return this.parseNow(task)
  }

  /** In this turn of the event loop (a document parsed from memory, in one go). */
  parseNow (task: BatchTask): ParsedBatch {
    return parseBatch(task, this.scratch)
  }

  async close (): Promise<void> {}
}

interface Waiting {
  resolve: (batch: ParsedBatch) => void
  reject: (error: Error) => void
}

/** What a parse thread sends once it has loaded its code, before any batch. */
export const READY = 'ready'

class ParseThread {
  /** Null when no thread could be made at all. */
  readonly worker: Worker | null = null
  /** Batches sent and not yet back: a thread answers them in the order it got them. */
  readonly waiting: Waiting[] = []
  /** True once the thread has loaded its code; false if it failed first (no batch is sent before). */
  readonly started: Promise<boolean>

  constructor (script: URL, parser: ThreadParser) {
    let worker: Worker
    try {
      worker = new Worker(script)
    } catch {
      this.started = Promise.resolve(false)
      return
    }
    this.worker = worker
    let started = false
    this.started = new Promise(resolve => {
      worker.on('message', (message: ParsedBatch | typeof READY) => {
        if (message === READY) {
          started = true
          resolve(true)
        } else {
          this.waiting.shift()?.resolve(message)
        }
      })
      const failed = (error: Error): void => {
        resolve(false)
        if (started) parser.fail(error)
      }
      worker.on('error', failed)
      // A result that could not be read on arrival: its batch is lost, as if the thread had failed.
      worker.on('messageerror', failed)
      worker.once('exit', code => failed(new Error(`exited (code ${code})`)))
    })
  }
}

/**
 * Parses on threads; until they have started, and on the loading thread if none can start (no thread to
 * spare, or a runtime that cannot load the thread's code: tsx, running the TypeScript source), so a load
 * never fails for want of threads.
 */
class ThreadParser implements BatchParser {
  private readonly threads: ParseThread[] = []
  private readonly started: Promise<ParseThread[]>
  private readonly inline = new InlineParser()
  private failure: Error | null = null
  readonly depth: number

  constructor (count: number, script: URL) {
    this.depth = 2 * count
    for (let i = 0; i < count; i++) this.threads.push(new ParseThread(script, this))
    this.started = Promise.all(this.threads.map(async thread => await thread.started))
      .then(started => this.threads.filter((_, i) => started[i]))
  }

  async parse (task: BatchTask): Promise<ParsedBatch> {
    const threads = await this.started
    if (this.failure !== null) throw this.failure
    if (threads.length === 0) return await this.inline.parse(task)
    // The thread with the fewest batches waiting.
    const thread = threads.reduce((a, b) => b.waiting.length < a.waiting.length ? b : a)
    return await new Promise<ParsedBatch>((resolve, reject) => {
      // Sent first: a batch that cannot be sent is not waited for (the results are matched by their order).
      thread.worker?.postMessage(task, [task.bytes.buffer as ArrayBuffer])
      thread.waiting.push({ resolve, reject })
    })
  }

  async close (): Promise<void> {
    this.failure ??= new Error('the parse threads were stopped')
    // Dropped, not rejected: the loader stopped waiting for them (a full report), and nothing catches them.
    for (const thread of this.threads) thread.waiting.length = 0
    await Promise.all(this.threads.map(async thread => await thread.worker?.terminate()))
  }

  /**
   * A started thread failed (a bug, or out of memory; a file's problems come back as problems): the batches
   * it held are lost, so the load fails, as the service's error (no `code`: not the file's).
   */
  fail (error: Error): void {
    this.failure ??= new Error(`a parse thread failed: ${error.message}`)
    for (const thread of this.threads) {
      for (const waiting of thread.waiting.splice(0)) waiting.reject(this.failure)
    }
  }
}
