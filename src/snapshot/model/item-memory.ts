// A model's item memory (nearly all its size) and its release once retired; chunks are shared (ADR 011).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { memoryPolicy } from '../memory-policy.js'

/** Retiring hints V8 (ADR 012). A load's derived versions share chunks, counting their holders. */
export class ItemMemory {
  private state: 'served' | 'retired' | 'released' = 'served'
  private readonly freedOnce: Promise<void>
  private markFreed: () => void = () => {}

  /** `chunks`: the list pages read, emptied when released so a model still referenced keeps none. */
  constructor (
    private readonly chunks: Buffer[],
    private readonly collector: Collector = hintedCollector,
    private readonly holders = new Map<ArrayBufferLike, number>()
  ) {
    this.freedOnce = new Promise(resolve => { this.markFreed = resolve })
    for (const buffer of this.buffers()) holders.set(buffer, (holders.get(buffer) ?? 0) + 1)
  }

  /** Shared, not copied. */
  derive (added: readonly Buffer[]): ItemMemory {
    this.check()
    return new ItemMemory([...this.chunks, ...added], this.collector, this.holders)
  }

  /** A derived version's chunks are numbered after its predecessor's. */
  get list (): readonly Buffer[] {
    return this.chunks
  }

  /** An emptied list would otherwise fail somewhere less clear. */
  check (): void {
    if (this.state === 'released') throw new Error('a retired snapshot model was read after its memory was released')
  }

  retire (): void {
    if (this.state !== 'served') return
    this.state = 'retired'
    // A turn first: something in this tick may hold a page whose views it has not taken.
    setImmediate(() => this.release())
  }

  /** Once the GC has taken every chunk: no answer still sends a view of one. */
  get freed (): Promise<void> {
    return this.freedOnce
  }

  get bytes (): number {
    let total = 0
    for (const buffer of this.buffers()) total += buffer.byteLength
    return total
  }

  /** 'released': no longer readable; the memory is gone once `freed` settles. */
  get status (): 'served' | 'retired' | 'released' {
    return this.state
  }

  private release (): void {
    this.state = 'released'
    const buffers = this.buffers().filter(buffer => {
      const left = (this.holders.get(buffer) ?? 1) - 1
      if (left === 0) this.holders.delete(buffer)
      else this.holders.set(buffer, left)
      return left === 0
    })
    this.chunks.length = 0
    this.collector.collect(buffers).then(this.markFreed, this.markFreed)
  }

  /** Chunks are views, several to a buffer. */
  private buffers (): ArrayBufferLike[] {
    return [...new Set(this.chunks.map(chunk => chunk.buffer))]
  }
}

/** Must hold none of the buffers it waits for. */
export interface Collector {
  collect: (buffers: ArrayBufferLike[]) => Promise<void>
}

/** Counted by V8 as external memory: a major GC (4–6 ms pause). Never written: never resident. */
const HINT_BYTES = 128 * 1024 * 1024
/** Backing off, ASKS times at most: a view kept for good is a leak. */
const FIRST_RETRY_MS = 1000
const LAST_RETRY_MS = 60_000
const ASKS = 12

/** Keeps each registry alive until all its buffers go. */
const waiting = new Set<FinalizationRegistry<null>>()

/** Let go or taken by the GC; the heap's garbage and the parse threads' go later. */
let lastRelease = -Infinity

/**
 * While memory let go may still be in RSS, collects now so a load about to be refused reads it again (ADR 024):
 * a hint alone left RSS over a 200 MB budget for 2.4 s (CI, 2026-11-27).
 */
export function memoryGoing (ms: number): boolean {
  const going = waiting.size > 0 || Date.now() - lastRelease < ms
  if (going) collectNow()
  return going
}

/** A full collection. `lastResort`: the young generation given back too (V8 12+). */
export function collectNow (lastResort = false): void {
  const gc = exposedGc()
  // Node 20's V8 scavenges for any options object, Node 24's for undefined too: no argument for a full one.
  if (lastResort && GC_FLAVORS) gc({ type: 'major', flavor: 'last-resort' })
  else gc()
}

const GC_FLAVORS = Number(process.versions.v8.split('.')[0]) >= 12

/** `gc` from a context made after the flag. */
function exposedGc (): (options?: { type: string, flavor: string }) => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as (options?: { type: string, flavor: string }) => void
}

const hintedCollector: Collector = {
  // Not an async function: its suspended frame would hold the buffers it waits for.
  collect (buffers: ArrayBufferLike[]): Promise<void> {
    // A derived version's chunks still shared.
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
 * Resolves once the GC has taken every one of `buffers` (emptied here: the caller must hold none), collecting every
 * 50 ms meanwhile, or after `ms`: a read refused half-way is given back before a parse asks for room.
 */
export function collected (buffers: ArrayBufferLike[], ms = 1000): Promise<void> {
  let left = buffers.length
  if (left === 0) return Promise.resolve()
  return new Promise<void>(resolve => {
    let timer: NodeJS.Timeout | undefined
    const registry = new FinalizationRegistry<null>(() => {
      if (--left === 0) done()
    })
    const done = (): void => {
      clearTimeout(timer)
      waiting.delete(registry)
      resolve()
    }
    waiting.add(registry)
    for (const buffer of buffers) registry.register(buffer, null)
    buffers.length = 0
    const deadline = Date.now() + ms
    const ask = (): void => {
      collectNow()
      if (left > 0 && Date.now() < deadline) timer = setTimeout(ask, 50)
      else if (left > 0) done()
    }
    ask()
  })
}

/** V8 does not count shared memory made garbage (ADR 012). Under an address space limit, no hint. */
export function collectSoon (): void {
  if (!memoryPolicy().collectionHint) return
  try {
    // eslint-disable-next-line no-new -- made only to be counted and dropped
    new ArrayBuffer(HINT_BYTES)
  } catch {}
}
