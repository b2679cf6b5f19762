// The memory a model's items are kept in (chunks of a few MiB: nearly all of a model's size), lent to the
// answers that send views of it, and freed on a thread of its own once the model is retired.
//
// Why not leave it to the garbage collector: the thread that frees a gigabyte of buffers spends a tenth of a
// second and more in the kernel giving the pages back, and a swapped-out model was freed by the main thread
// (BENCHMARKS.md, "Freeing the old model": a 110–130 ms stall of every request in a reload of 1M items).
// Moved to a worker that frees them a few at a time, the same memory costs the main thread nothing.
//
// The catch is that moving a buffer to another thread detaches it here: an answer whose views of it are
// still queued on a slow socket would send freed memory. So every answer that sends views borrows the
// memory until its response closes, and a retired model's chunks move only once nothing is lent.
import { Worker } from 'node:worker_threads'

export class ItemMemory {
  private readonly chunks: Buffer[] = []
  private lent = 0
  private state: 'served' | 'retired' | 'freed' = 'served'
  private readonly freedOnce: Promise<void>
  private markFreed: () => void = () => {}

  constructor (private readonly reaper: Reaper = sharedReaper) {
    this.freedOnce = new Promise(resolve => { this.markFreed = resolve })
  }

  /** Chunks to free with the rest (each a buffer with an ArrayBuffer of its own, never a pool slice). */
  hold (chunks: readonly Buffer[]): void {
    this.chunks.push(...chunks)
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

  /** Answers still sending views of it. */
  get borrowed (): number {
    return this.lent
  }

  get status (): 'served' | 'retired' | 'freed' {
    return this.state
  }

  private free (): void {
    this.state = 'freed'
    const buffers = [...new Set(this.chunks.map(chunk => chunk.buffer))].filter(buffer => buffer instanceof ArrayBuffer)
    this.chunks.length = 0
    this.reaper.take(buffers).then(this.markFreed, this.markFreed)
  }
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
