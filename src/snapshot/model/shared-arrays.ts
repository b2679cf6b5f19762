// The served model's arrays, read by every serving thread (ADR 029): shared from SHARED_FROM bytes.
import { KINDS, arrayOver, type ArrayOf, type Kind } from './version-arrays.js'

/** Bytes; smaller arrays are cheaper copied to each thread. */
export const SHARED_FROM = 4096

export function sharedArray<K extends Kind> (kind: K, length: number): ArrayOf[K] {
  const bytes = length * KINDS[kind].BYTES_PER_ELEMENT
  return arrayOver(kind, bytes >= SHARED_FROM ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes), length)
}

export function uint32ArrayOf (values: ArrayLike<number>): Uint32Array {
  const array = sharedArray('u32', values.length)
  array.set(values)
  return array
}
