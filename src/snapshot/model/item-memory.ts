// The memory a model's items are kept in (nearly all its size), and its release once the model is retired.
// Chunks are SharedArrayBuffers (ADR 011): freed when the GC takes their last view, so a slow answer keeps its own.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { memoryPolicy } from '../memory-policy.js'

/**
 * A model's chunks. Retiring empties the list and hints V8 (ADR 012); `freed` settles once a FinalizationRegistry
 * has seen every chunk go. A load's derived versions share chunks, counting their holders.
 */
export class ItemMemory {
  private state: 'served' | 'retired' | 'released' = 'served'
  private readonly freedOnce: Promise<void>
  private markFreed: () => void = () => {}

  /**
   * @param chunks the model's own list, the one its pages read. Emptied when released, so a retired model
   *   still referenced somewhere does not keep its chunks.
   */
  constructor (
    private readonly chunks: Buffer[],
    private readonly collector: Collector = hintedCollector,
    /** Buffer → how many unreleased memories of one load's versions hold it. */
    private readonly holders = new Map<ArrayBufferLike, number>()
  ) {
    this.freedOnce = new Promise(resolve => { this.markFreed = resolve })
    for (const buffer of this.buffers()) holders.set(buffer, (holders.get(buffer) ?? 0) + 1)
  }

  /** The memory of a version derived from this one: these chunks, then `added`, shared, not copied. */
  derive (added: readonly Buffer[]): ItemMemory {
    this.check()
    return new ItemMemory([...this.chunks, ...added], this.collector, this.holders)
  }

  /** The chunks, in order: a derived version's items are numbered after its predecessor's. */
  get list (): readonly Buffer[] {
    return this.chunks
  }

  /** Throws once released: a model's emptied list would otherwise fail somewhere less clear. */
  check (): void {
    if (this.state === 'released') throw new Error('a retired snapshot model was read after its memory was released')
  }

  /** Nothing will read this model any more: a turn of the event loop later its chunks are let go. */
  retire (): void {
    if (this.state !== 'served') return
    this.state = 'retired'
    // A turn first, so nothing still in this tick holds a page whose views it has not taken.
    setImmediate(() => this.release())
  }

  /** Settles once the garbage collector has taken every chunk (no answer still sends a view of one). */
  get freed (): Promise<void> {
    return this.freedOnce
  }

  /** Bytes of the chunks held, each buffer once (none once released): the model's items, nearly all its size. */
  get bytes (): number {
    let total = 0
    for (const buffer of this.buffers()) total += buffer.byteLength
    return total
  }

  /** 'released': the model can no longer be read (its list is emptied); its memory is gone once `freed` settles. */
  get status (): 'served' | 'retired' | 'released' {
    return this.state
  }

  private release (): void {
    this.state = 'released'
    // Only what no other version of the load still holds is garbage, and waited for.
    const buffers = this.buffers().filter(buffer => {
      const left = (this.holders.get(buffer) ?? 1) - 1
      if (left === 0) this.holders.delete(buffer)
      else this.holders.set(buffer, left)
      return left === 0
    })
    this.chunks.length = 0
    this.collector.collect(buffers).then(this.markFreed, this.markFreed)
  }

  /** The memory under the chunks held, each buffer once (chunks are views, several to a buffer). */
  private buffers (): ArrayBufferLike[] {
    return [...new Set(this.chunks.map(chunk => chunk.buffer))]
  }
}

/** Settles once the garbage collector has taken the shared buffers it is given (and holds none of them). */
export interface Collector {
  collect: (buffers: ArrayBufferLike[]) => Promise<void>
}

/** Made and dropped, counted by V8 as external memory: a major GC (4–6 ms pause). Never written: never resident. */
const HINT_BYTES = 128 * 1024 * 1024
/** Asked again while a buffer lives, twice as long each time, ASKS times at most: a view kept for good is a leak. */
const FIRST_RETRY_MS = 1000
const LAST_RETRY_MS = 60_000
const ASKS = 12

/** A model's worth of shared chunks being waited for: each registry is kept here until all its buffers go. */
const waiting = new Set<FinalizationRegistry<null>>()

/** When shared chunks were last let go, or taken by the GC: the heap's garbage and the parse threads' go later. */
let lastRelease = -Infinity

/**
 * True while memory let go may still be counted in the process's RSS: a retired model's or an abandoned load's
 * chunks wait for the GC, or went less than `ms` ago. Then a full collection runs now: a load about to be
 * refused for memory reads RSS again after it (ADR 024). A hint alone left RSS over a 200 MB budget for 2.4 s
 * after a load abandoned at it (CI, 2026-11-27). `gc` from a context made after the flag, as parse-worker.ts.
 */
export function memoryGoing (ms: number): boolean {
  const going = waiting.size > 0 || Date.now() - lastRelease < ms
  if (going) {
    setFlagsFromString('--expose-gc')
    ;(runInNewContext('gc') as () => void)()
  }
  return going
}

const hintedCollector: Collector = {
  // Not an async function: its suspended frame would hold the buffers it waits for.
  collect (buffers: ArrayBufferLike[]): Promise<void> {
    // Nothing freed (a derived version's chunks still shared): nothing on its way out.
    if (buffers.length === 0) return Promise.resolve()
    lastRelease = Date.now()
    let left = buffers.length
    let timer: NodeJS.Timeout | undefined
    return new Promise<void>(resolve => {
      const registry = new FinalizationRegistry<null>(() => {
        if (--left > 0) return
        clearTimeout(timer)
        waiting.delete(registry)
        lastRelease = Date.now()
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
 * Asks V8 for a major GC soon, for shared memory just made garbage, which it does not count (ADR 012). Where
 * the hint cannot be made (an address space limit), the GC comes when V8 sees another reason.
 */
export function collectSoon (): void {
  if (!memoryPolicy().collectionHint) return
  try {
    // eslint-disable-next-line no-new -- made only to be counted and dropped
    new ArrayBuffer(HINT_BYTES)
  } catch {}
}
