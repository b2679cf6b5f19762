// Memory for answers, carved from large slabs. An uncached answer needs a fresh 5–50 KB buffer; one
// allocation each (Buffer.allocUnsafe pools only below 4 KiB) cost a quarter of a raw Node server's
// throughput on the cold benchmark, in malloc, GC of the backing stores and colder memory for the
// kernel's copy. A slab is never reused: it is freed by the GC once no answer cut from it is referenced,
// as Node's own Buffer pool is. An answer kept for longer (the page cache) is copied out, so it does
// not hold a whole slab alive.

const SLAB_BYTES = 1024 * 1024
/** Larger answers get a buffer of their own: a slab should hold many answers. */
const LARGEST_CARVED = SLAB_BYTES / 8

let slab = Buffer.allocUnsafe(0)
let used = 0

/** A buffer of `size` bytes, contents undefined (like Buffer.allocUnsafe). */
export function slabBytes (size: number): Buffer {
  if (size > LARGEST_CARVED) return Buffer.allocUnsafe(size)
  if (used + size > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
    used = 0
  }
  const out = slab.subarray(used, used + size)
  // Keep the next answer 8-byte aligned, as malloc would.
  used += (size + 7) & ~7
  return out
}

/** Memory of its own for an answer made to be kept (the page cache): never a slice of a slab. */
export function ownBytes (size: number): Buffer {
  return Buffer.allocUnsafeSlow(size)
}

/** A buffer of its own with the same bytes, for an answer that outlives the request. */
export function ownCopy (buffer: Buffer): Buffer {
  return buffer.byteLength === buffer.buffer.byteLength ? buffer : Buffer.from(buffer)
}
