// A version as views of shared memory (ADR 029); a thread reuses buffers it holds, which its successor still reads.
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { modelOf, partsOf, swapArrays, type VersionParts } from '../snapshot/model/version-parts.js'
import { arrayOver, kindOf, type Kind, type View } from '../snapshot/model/version-arrays.js'

/** A view of a numbered shared buffer, or a small array copied with the message. */
export type ArrayRef = { buffer: number, kind: Kind, offset: number, length: number } | View

export interface VersionMessage {
  parts: VersionParts<ArrayRef>
  buffers: Array<[number, SharedArrayBuffer]>
}

/**
 * The control's side: a buffer keeps the number it was first handed over with while it lives, so a thread reuses what
 * it holds.
 */
export class VersionDescriber {
  private readonly numbers = new WeakMap<SharedArrayBuffer, number>()
  private last = 0

  describe (model: SnapshotModel): VersionMessage {
    const buffers = new Map<number, SharedArrayBuffer>()
    const parts = swapArrays(partsOf(model), ArrayBuffer.isView as (value: unknown) => value is View, array => {
      const { buffer } = array
      if (!(buffer instanceof SharedArrayBuffer)) return array
      let number = this.numbers.get(buffer)
      if (number === undefined) this.numbers.set(buffer, number = ++this.last)
      buffers.set(number, buffer)
      return { buffer: number, kind: kindOf(array), offset: array.byteOffset, length: array.length }
    })
    return { parts, buffers: [...buffers] }
  }
}

/** A serving thread's side. */
export class VersionAdopter {
  /** Weak: forgotten once no version of this thread holds it. */
  private readonly held = new Map<number, WeakRef<SharedArrayBuffer>>()
  /** Buffer → how many of this thread's unreleased versions hold it (item-memory.ts). */
  private readonly holders = new Map<ArrayBufferLike, number>()

  adopt (message: VersionMessage): SnapshotModel {
    const buffers = new Map<number, SharedArrayBuffer>()
    for (const [number, buffer] of message.buffers) {
      const known = this.held.get(number)?.deref()
      buffers.set(number, known ?? buffer)
      if (known === undefined) this.held.set(number, new WeakRef(buffer))
    }
    for (const [number, held] of this.held) if (held.deref() === undefined) this.held.delete(number)
    const parts = swapArrays(message.parts, isArrayRef, ref => {
      if (ArrayBuffer.isView(ref)) return ref
      return arrayOver(ref.kind, buffers.get(ref.buffer) as SharedArrayBuffer, ref.length, ref.offset)
    })
    return modelOf(parts, this.holders)
  }
}

function isArrayRef (value: unknown): value is ArrayRef {
  return ArrayBuffer.isView(value) || (typeof value === 'object' && value !== null && 'kind' in value && 'buffer' in value)
}
