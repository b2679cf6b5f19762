// The served model's arrays, read by every serving thread (ADR 029): shared from SHARED_FROM bytes.

/** Bytes; smaller arrays are cheaper copied to each thread. */
export const SHARED_FROM = 4096

type Kind<T> = new (buffer: ArrayBufferLike, offset?: number, length?: number) => T

function make<T> (Kind: Kind<T> & { BYTES_PER_ELEMENT: number }, length: number): T {
  const bytes = length * Kind.BYTES_PER_ELEMENT
  return new Kind(bytes >= SHARED_FROM ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes), 0, length)
}

export function uint16Array (length: number): Uint16Array { return make(Uint16Array, length) }
export function uint32Array (length: number): Uint32Array { return make(Uint32Array, length) }
export function float64Array (length: number): Float64Array { return make(Float64Array, length) }

export function uint32ArrayOf (values: ArrayLike<number>): Uint32Array {
  const array = uint32Array(values.length)
  array.set(values)
  return array
}
