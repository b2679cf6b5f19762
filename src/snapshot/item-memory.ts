// The memory a model's items are kept in (chunks of a few MiB: nearly all of a model's size), lent to the
// answers that send views of it, and freed once the model is retired.
//
// Chunks are of two kinds. Most are shared memory: every batch a load renders (on a parse thread, or on
// this thread for a small file) is copied into a SharedArrayBuffer (item-bytes.ts). V8 counts an
// ArrayBuffer as the memory of the thread that holds it, and starts a major collection whenever that grows
// by 64 MB: the 1.4 GB of a 1M reload's chunks, arriving from the parse threads, set off 22–26 of them in
// each reload, with their pauses and their marking threads beside the requests; shared memory is not
// counted, and the same reload runs one or two (BENCHMARKS.md, "Shared chunks, and a schema compiled under
// load"). Shared memory cannot be moved, or freed by us: it goes when the collector takes its last view.
// So a retired model empties its lists of chunks, tells V8 that a lot of memory is now garbage, and
// settles once a FinalizationRegistry has seen every chunk go.
//
// The others, the full chunks of a document rendered whole on this thread (load-snapshot.ts, loadWhole: a
// valid document the streamer could not follow), are ArrayBuffers, freed on a thread of their own: the
// thread that frees a gigabyte of buffers spends a tenth of a second and more in the kernel giving the
// pages back, and a swapped-out model was freed by the main thread (BENCHMARKS.md, "Freeing the old
// model": a 110–130 ms stall of every request in a reload of 1M items). Moved to a worker that frees them
// a few at a time, they cost the main thread nothing.
//
// Either way an answer whose views are still queued on a slow socket must not lose them: a moved buffer is
// detached here, and freed memory would go out. So every answer that sends views borrows the memory until
// its response closes, and a retired model's chunks are let go only once nothing is lent.
import { Worker } from 'node:worker_threads'

export class ItemMemory {
  /** The model's own lists of its chunks: emptied when freed, so that the model holds none of them after. */
  private readonly lists: Buffer[][] = []
  private lent = 0
  private state: 'served' | 'retired' | 'freed' = 'served'
  private readonly freedOnce: Promise<void>
  private markFreed: () => void = () => {}

  constructor (private readonly reaper: Reaper = sharedReaper, private readonly collector: Collector = hintedCollector) {
    this.freedOnce = new Promise(resolve => { this.markFreed = resolve })
  }

  /**
   * The model's list of chunks (each a buffer with an ArrayBuffer or SharedArrayBuffer of its own, never a
   * pool slice), to free with the rest. The list itself is emptied then: a shared chunk goes only when the
   * collector takes its last view, and a retired model still referenced somewhere must not keep it.
   */
  hold (chunks: Buffer[]): void {
    this.lists.push(chunks)
  }

  /** Throws once freed: reading a detached chunk would silently give empty bytes, never an error. */
  check (): void {
    if (this.state === 'freed') throw new Error('a retired snapshot model was read after its memory was freed')
  }

  /** Borrows the memory for views that outlive this tick; the returned function gives it back (once). */
  lend (): () => void {
    this.check()
    this.lent++
    let back = false
    return () => {
      if (back) return
      back = true
      if (--this.lent === 0 && this.state === 'retired') this.free()
    }
  }

  /** Nothing will read this model any more once what is lent comes back: then its chunks are freed. */
  retire (): void {
    if (this.state !== 'served') return
    this.state = 'retired'
    // A turn of the event loop first, so that nothing still in this tick holds a page of it unseen.
    setImmediate(() => { if (this.lent === 0 && this.state === 'retired') this.free() })
  }

  /** Settles once the chunks are freed (or left to the garbage collector, where no worker runs). */
  get freed (): Promise<void> {
    return this.freedOnce
  }

  /** Bytes of the chunks held, each buffer once (none once freed): the model's items, nearly all its size. */
  get bytes (): number {
    let total = 0
    for (const buffer of this.buffers()) total += buffer.byteLength
    return total
  }

  /** Answers still sending views of it. */
  get borrowed (): number {
    return this.lent
  }

  get status (): 'served' | 'retired' | 'freed' {
    return this.state
  }

  private free (): void {
    this.state = 'freed'
    const buffers = this.buffers()
    for (const list of this.lists) list.length = 0
    const moved = buffers.filter(buffer => buffer instanceof ArrayBuffer)
    const shared = buffers.filter(buffer => buffer instanceof SharedArrayBuffer)
    Promise.all([this.reaper.take(moved), this.collector.collect(shared)]).then(this.markFreed, this.markFreed)
  }

  /** The memory under the chunks held, each buffer once (chunks are views, several to a buffer). */
  private buffers (): ArrayBufferLike[] {
    return [...new Set(this.lists.flat().map(chunk => chunk.buffer))]
  }
}

/** Settles once the garbage collector has taken the shared buffers it is given (and holds none of them). */
export interface Collector {
  collect: (buffers: SharedArrayBuffer[]) => Promise<void>
}

/**
 * An ArrayBuffer this large, made and dropped at once, is external memory V8 counts: over its limit, it
 * starts a major collection (seen in --trace-incremental-marking as "external memory pressure", a 4–6 ms
 * pause). Never written, its pages are never resident.
 */
const HINT_BYTES = 128 * 1024 * 1024
/**
 * Asked again after this long while some of the buffers live on (a view still held), then twice as long,
 * up to a minute, at most ASKS times: a view held for good is a leak no collection can mend.
 */
const FIRST_RETRY_MS = 1000
const LAST_RETRY_MS = 60_000
const ASKS = 12

/** A model's worth of shared chunks being waited for: each registry is kept here until all its buffers go. */
const waiting = new Set<FinalizationRegistry<null>>()

const hintedCollector: Collector = {
  // Not an async function: its suspended frame would hold the buffers it waits for.
  collect (buffers: SharedArrayBuffer[]): Promise<void> {
    if (buffers.length === 0) return Promise.resolve()
    let left = buffers.length
    let timer: NodeJS.Timeout | undefined
    return new Promise<void>(resolve => {
      const registry = new FinalizationRegistry<null>(() => {
        if (--left > 0) return
        clearTimeout(timer)
        waiting.delete(registry)
        resolve()
      })
      waiting.add(registry)
      for (const buffer of buffers) registry.register(buffer, null)
      buffers.length = 0
      let wait = FIRST_RETRY_MS
      let asks = 0
      const ask = (): void => {
        collectSoon()
        if (++asks === ASKS) return
        timer = setTimeout(ask, wait).unref()
        wait = Math.min(2 * wait, LAST_RETRY_MS)
      }
      ask()
    })
  }
}

/**
 * Asks V8 for a major collection soon (concurrent, as any other): for shared memory just made garbage, a
 * retired model's or a failed load's, which it does not count. Where the hint cannot be made (an address
 * space limit), the collection comes when V8 sees another reason.
 */
export function collectSoon (): void {
  try {
    // eslint-disable-next-line no-new -- made only to be counted and dropped
    new ArrayBuffer(HINT_BYTES)
  } catch {}
}

/**
 * Frees buffers off the main thread; where it cannot, leaves them to the garbage collector. Settles once
 * they are freed, or left.
 */
export interface Reaper {
  take: (buffers: ArrayBuffer[]) => Promise<void>
}

// Built code runs reaper-worker.js; tests run the TypeScript source, through the loader they run under.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './reaper-worker.ts' : './reaper-worker.js', import.meta.url)

/** One worker for the process, started at the first retirement, never keeping the process alive. */
class WorkerReaper implements Reaper {
  private worker: Worker | null = null
  private broken = false
  /** Handed over and not yet reported freed, in order: the worker frees them first come, first freed. */
  private readonly pending: Array<{ buffers: number, done: () => void }> = []

  /** Starts the thread ahead of the first retirement. */
  warm (): void {
    this.start()
  }

  async take (buffers: ArrayBuffer[]): Promise<void> {
    if (buffers.length === 0) return
    const worker = this.start()
    if (worker === null) return
    try {
      worker.postMessage(buffers, buffers)
    } catch {
      // A buffer that cannot move (one Node marked untransferable) stays here, for the garbage collector.
      return
    }
    // Held open while it frees (a fraction of a second), so that `freed` settles; idle, it holds nothing.
    if (this.pending.length === 0) worker.ref()
    await new Promise<void>(resolve => this.pending.push({ buffers: buffers.length, done: resolve }))
  }

  private start (): Worker | null {
    if (this.worker !== null || this.broken) return this.worker
    try {
      const worker = new Worker(WORKER)
      worker.on('message', (freed: number) => this.reported(freed))
      // After the listener: adding one refs the worker again.
      worker.unref()
      // A worker that fails is not started again: the garbage collector frees what it would have.
      worker.once('error', () => { this.broken = true })
      worker.once('exit', () => {
        this.worker = null
        for (const { done } of this.pending.splice(0)) done()
      })
      this.worker = worker
    } catch {
      this.broken = true
    }
    return this.worker
  }

  /** The worker freed `count` more buffers. */
  private reported (count: number): void {
    let left = count
    while (left > 0 && this.pending.length > 0) {
      const first = this.pending[0] as { buffers: number, done: () => void }
      const taken = Math.min(left, first.buffers)
      first.buffers -= taken
      left -= taken
      if (first.buffers === 0) {
        this.pending.shift()
        first.done()
      }
    }
    if (this.pending.length === 0) this.worker?.unref()
  }
}

const sharedReaper = new WorkerReaper()

/**
 * Starts the reaper thread now: its start (a thread, an isolate: ~50 ms of a core) then does not compete
 * with the requests of the first swap, on a machine of two cores.
 */
export function warmReaper (): void {
  sharedReaper.warm()
}
