// id → slot by open addressing in typed arrays, which serving threads share, unlike a Map (ADRs 026, 029).
import { sharedArray } from './shared-arrays.js'

export class IdSlots {
  private readonly mask: number
  private readonly shift: number

  /** `slots`: slot + 1, so a fresh (zeroed) array is empty. */
  private constructor (readonly keys: Float64Array, readonly slots: Uint32Array) {
    this.mask = keys.length - 1
    this.shift = 32 - Math.log2(keys.length)
  }

  static sized (count: number): IdSlots {
    let bits = 4
    while (2 ** bits < 2 * count) bits++
    return new IdSlots(sharedArray('f64', 2 ** bits), sharedArray('u32', 2 ** bits))
  }

  /** A thread's copy of the control's. */
  static of ({ keys, slots }: { keys: Float64Array, slots: Uint32Array }): IdSlots {
    return new IdSlots(keys, slots)
  }

  /** Fibonacci hashing's high bits: the low bits keep runs of ids (ADR 026). */
  private start (id: number): number {
    return Math.imul((id | 0) ^ ((id / 4294967296) | 0), 0x9e3779b1) >>> this.shift
  }

  set (id: number, slot: number): void {
    let at = this.start(id)
    while (this.slots[at] !== 0 && this.keys[at] !== id) at = (at + 1) & this.mask
    this.keys[at] = id
    this.slots[at] = slot + 1
  }

  get (id: number): number {
    for (let at = this.start(id); ; at = (at + 1) & this.mask) {
      const slot = this.slots[at] as number
      if (slot === 0) return -1
      if (this.keys[at] === id) return slot - 1
    }
  }

  /** In no order. */
  * entries (): Generator<[number, number]> {
    for (let at = 0; at < this.slots.length; at++) {
      const slot = this.slots[at] as number
      if (slot !== 0) yield [this.keys[at] as number, slot - 1]
    }
  }
}
