// Every trick played on V8, glibc or Linux for a large load, each with a switch so the bench shows it pays (ADR 023).

export interface MemoryPolicy {
  /** Items in SharedArrayBuffers, which V8 does not count: a 1M reload ran 22–26 major GCs, now 1–2 (ADR 011). */
  sharedItemMemory: boolean
  /** A retired model makes and drops a 128 MiB ArrayBuffer V8 counts, to start the GC that frees it (ADR 012). */
  collectionHint: boolean
  /** Parse threads at nice 10: a reload takes a core from requests only when they leave it idle (ADR 009). */
  lowPriorityParseThreads: boolean
  /** Batch and render buffers reused, not freed per batch, which raises glibc's mmap threshold (ADR 010). */
  reusedBatchMemory: boolean
  /** Each parse thread runs a full GC after a load, or its idle heap keeps what the load left (ADR 022). */
  restingParseThreads: boolean
}

export const MEMORY_TRICKS = [
  'sharedItemMemory', 'collectionHint', 'lowPriorityParseThreads', 'reusedBatchMemory', 'restingParseThreads'
] as const

const policy: MemoryPolicy = {
  sharedItemMemory: true,
  collectionHint: true,
  lowPriorityParseThreads: true,
  reusedBatchMemory: true,
  restingParseThreads: true
}

export function memoryPolicy (): Readonly<MemoryPolicy> {
  return policy
}

/** Before anything loads: the bench's probe, and a parse thread taking its pool's policy. */
export function setMemoryPolicy (changes: Partial<MemoryPolicy>): void {
  Object.assign(policy, changes)
}
