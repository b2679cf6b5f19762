// The served model's arrays, made once and read by every serving thread (docs/decisions/029): an array of
// SHARED_FROM bytes or more is made over a SharedArrayBuffer, which a message to a thread shares rather
// than copies; a smaller one stays an ordinary array, copied with the message for less than a shared
// buffer of its own costs.

/** Arrays from this size (bytes) are shared; smaller ones are copied to each thread. */
export const SHARED_FROM = 4096

type Kind<T> = new (buffer: ArrayBufferLike, offset?: number, length?: number) => T

function make<T> (Kind: Kind<T> & { BYTES_PER_ELEMENT: number }, length: number): T {
  const bytes = length * Kind.BYTES_PER_ELEMENT
  return new Kind(bytes >= SHARED_FROM ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes), 0, length)
}

export function uint16Array (length: number): Uint16Array { return make(Uint16Array, length) }
export function uint32Array (length: number): Uint32Array { return make(Uint32Array, length) }
function int32Array (length: number): Int32Array { return make(Int32Array, length) }
export function float64Array (length: number): Float64Array { return make(Float64Array, length) }

/** `values` in a Uint32Array made as above. */
export function uint32ArrayOf (values: ArrayLike<number>): Uint32Array {
  const array = uint32Array(values.length)
  array.set(values)
  return array
}

/** `values` in an Int32Array made as above. */
export function int32ArrayOf (values: ArrayLike<number>): Int32Array {
  const array = int32Array(values.length)
  array.set(values)
  return array
}
