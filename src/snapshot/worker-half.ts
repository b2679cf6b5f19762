// A worker thread that parses, checks and serializes the second half of a large snapshot's items while
// the loading thread does the first half: the per-item work is most of a load, and a second core halves
// it. The worker gets a copy of its half's bytes and gives back its items as built (LanguagePart):
// buffers and typed arrays, moved between the threads, never copied item by item.
import { Worker } from 'node:worker_threads'
import type { LanguagePart } from './build-model.js'
import type { ItemPlaces } from './add-items.js'
import { runInSlices } from './slices.js'

/** What the loading thread sends: the items from `from` on, their bytes and places in those bytes. */
export interface ItemTask {
  bytes: Uint8Array<ArrayBuffer>
  languages: string[]
  itemLanguage: Uint16Array<ArrayBuffer>
  itemIndex: Uint32Array<ArrayBuffer>
  itemStart: Uint32Array<ArrayBuffer>
  itemEnd: Uint32Array<ArrayBuffer>
}

/** What the worker answers: every language's items, or that one of them is not valid. */
export type ItemOutcome = { valid: true, parts: Array<[string, LanguagePart]> } | { valid: false }

/**
 * The worker's half: its items by language; 'invalid' when one is not valid (the loader then reports the
 * file as a whole); 'unavailable' when the worker could not do it (the loader adds them itself).
 */
export type WorkerHalfResult = Map<string, LanguagePart> | 'invalid' | 'unavailable'

// Built code runs item-worker.js; tests run the TypeScript source, through the loader they run under.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './item-worker.ts' : './item-worker.js', import.meta.url)

export class WorkerHalf {
  private readonly worker: Worker | null
  private readonly ended: Promise<'unavailable'>

  /** Starts the worker now, so it loads its modules while the caller scans the document. */
  constructor () {
    let worker: Worker | null = null
    try {
      worker = new Worker(WORKER)
    } catch {
      worker = null
    }
    this.worker = worker
    // However the worker ends before it answers (an error, running out of memory, stop()), its half is
    // left to the loading thread.
    this.ended = worker === null
      ? Promise.resolve('unavailable')
      : new Promise(resolve => {
        worker.once('error', () => resolve('unavailable'))
        worker.once('exit', () => resolve('unavailable'))
      })
  }

  /** Hands the worker the items of `places` from `from` on. */
  async add (raw: Buffer, places: ItemPlaces, from: number): Promise<WorkerHalfResult> {
    const { worker } = this
    if (worker === null) return 'unavailable'
    const count = places.itemCount - from
    if (count <= 0) return new Map()
    const base = places.itemStart[from] as number
    // A copy of the half's bytes, in memory of its own that moves to the worker: ~140 MB at 200k items,
    // copied in slices (in one go it held the event loop for ~100 ms).
    const bytes = await runInSlices(copySteps(raw.subarray(base, places.itemEnd[places.itemCount - 1] as number)))
    const task: ItemTask = {
      bytes,
      languages: places.languages,
      itemLanguage: new Uint16Array(count),
      itemIndex: new Uint32Array(count),
      itemStart: new Uint32Array(count),
      itemEnd: new Uint32Array(count)
    }
    for (let k = 0; k < count; k++) {
      task.itemLanguage[k] = places.itemLanguage[from + k] as number
      task.itemIndex[k] = places.itemIndex[from + k] as number
      task.itemStart[k] = (places.itemStart[from + k] as number) - base
      task.itemEnd[k] = (places.itemEnd[from + k] as number) - base
    }
    const answer = new Promise<WorkerHalfResult>(resolve => {
      worker.once('message', (outcome: ItemOutcome) => resolve(outcome.valid ? new Map(outcome.parts) : 'invalid'))
    })
    // Kept referenced while it works: a process with nothing else to do (the snapshot check command)
    // must wait for it. The loader stops it when the load ends, however it ends.
    worker.postMessage(task, [bytes.buffer, task.itemLanguage.buffer, task.itemIndex.buffer, task.itemStart.buffer, task.itemEnd.buffer])
    return await Promise.race([answer, this.ended])
  }

  /** Ends the worker, whatever it is doing. */
  stop (): void {
    this.worker?.terminate().catch(() => {})
  }
}

/** Bytes copied per step: a few milliseconds' worth. */
const COPY_STEP = 8 * 1024 * 1024

/** A copy of `source` in memory of its own, as steps (slices.ts). */
function * copySteps (source: Uint8Array): Generator<void, Uint8Array<ArrayBuffer>> {
  const copy = new Uint8Array(source.length)
  for (let at = 0; at < source.length; at += COPY_STEP) {
    copy.set(source.subarray(at, at + COPY_STEP), at)
    yield
  }
  return copy
}
