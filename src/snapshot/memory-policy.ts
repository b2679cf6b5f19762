// Every trick the snapshot layers play on V8, glibc or Linux to keep a large load's memory and stalls down,
// in one place: what each does, why, and the record that measured it. Each can be turned off, so that
// `npm run bench -- --sizes 1m` (bench/memory-policy.ts) shows, on the Node the project runs on, whether it
// still pays; one that no longer does is to be removed here and where it is used.
//
// Production never changes the policy. Only the bench's probe does, before anything is loaded, in a
// process of its own; the parse threads get it when the pool starts (parse-pool.ts).

export interface MemoryPolicy {
  /**
   * Rendered items live in SharedArrayBuffers, not ArrayBuffers (model/item-bytes.ts). V8 counts an
   * ArrayBuffer as its thread's external memory and starts a major collection each time that grows by
   * 64 MB: a 1M reload's 1.4 GB of items set off 22–26 of them, each a pause beside the requests; shared
   * memory is not counted, and the same reload runs one or two (docs/decisions/011).
   */
  sharedItemMemory: boolean
  /**
   * After a model is retired or a load fails, a 128 MiB ArrayBuffer is made and dropped at once
   * (model/item-memory.ts, collectSoon). V8 does not know that the shared memory just let go is garbage;
   * an external allocation over its limit starts the major collection that frees it. Never written, its
   * pages are never resident (docs/decisions/012).
   */
  collectionHint: boolean
  /**
   * Parse threads run at a lower priority (nice 10, set on Linux through /proc/thread-self's thread id):
   * a reload under load then takes a core from the requests only when they leave it idle (docs/decisions/009).
   */
  lowPriorityParseThreads: boolean
  /**
   * A batch's input memory is reused for a later batch, and each parse thread renders into one scratch
   * buffer for all its batches. A buffer made and freed per batch, freed on another thread, raises glibc's
   * threshold for giving large blocks their own mapping, after which the model's memory shares heaps with
   * freed memory that stays resident (tens of MB of settled RSS at 1M items: docs/decisions/010).
   */
  reusedBatchMemory: boolean
  /**
   * After each load the parse pool's threads, which live as long as the process, run a full collection
   * (parse-worker.ts, `rest`). Idle, a thread's heap keeps what a load left in it: the bench's settled RSS
   * collects the main thread only, and at 200k items two threads kept ~120 MB more than per-load threads,
   * which exited (docs/decisions/022).
   */
  restingParseThreads: boolean
}

export const MEMORY_TRICKS = ['sharedItemMemory', 'collectionHint', 'lowPriorityParseThreads', 'reusedBatchMemory', 'restingParseThreads'] as const

const policy: MemoryPolicy = {
  sharedItemMemory: true,
  collectionHint: true,
  lowPriorityParseThreads: true,
  reusedBatchMemory: true,
  restingParseThreads: true
}

/** The policy in force (every trick on, unless the bench's probe turned one off). */
export function memoryPolicy (): Readonly<MemoryPolicy> {
  return policy
}

/** For the bench's probe (and a parse thread, which gets its pool's policy): before anything loads. */
export function setMemoryPolicy (changes: Partial<MemoryPolicy>): void {
  Object.assign(policy, changes)
}
