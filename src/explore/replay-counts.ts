// How many times each request was asked for before, for trouble that follows the request (CHAOS_REPLAY=request, ADR
// 041): a table of fixed size in shared memory, so every serving thread counts the same request in one place.
import { avalanche } from '../generate/random-source.js'

/** Slots of the table: twice the keys it holds, so that a probe finds its key or a free slot within a few steps. */
const SLOTS = 32_768
/** Distinct requests counted before the counts start again from zero (as after DELETE /-/requests). */
export const REPLAY_KEYS = SLOTS / 2
const PROBES = 32
/** The last word counts the keys held. */
const HELD = SLOTS * 2

/** Two independent 32-bit digests of a request: `tag` names it in the table, `spot` is where its probe starts. */
export class RequestDigest {
  tag = 0
  spot = 0

  /** Of `method`, `target` and `steering` (the headers that steer its trouble, '' for none), each part delimited. */
  of (method: string, target: string, steering: string): this {
    let a = 0x811c9dc5
    let b = 0x5bd1e995
    const mixIn = (text: string): void => {
      for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i)
        a = Math.imul(a ^ code, 0x01000193)
        b = Math.imul(b ^ code, 0x85ebca77)
        b ^= b >>> 13
      }
      // A delimiter no text holds: ("GE", "T/") is not ("GET", "/").
      a = Math.imul(a ^ 0x1_0000, 0x01000193)
      b = Math.imul(b ^ 0x1_0000, 0x85ebca77)
    }
    mixIn(method)
    mixIn(target)
    mixIn(steering)
    this.tag = avalanche(a) | 0 || 1
    this.spot = avalanche(b)
    return this
  }
}

/** murmur3's step: `word` folded into the running `h`. */
export function fold (h: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51)
  k = (k << 15) | (k >>> 17)
  h ^= Math.imul(k, 0x1b873593)
  h = (h << 13) | (h >>> 19)
  return (Math.imul(h, 5) + 0xe6546b64) | 0
}

/** Lock-free: a key's slot is claimed by compare-and-swap of its tag, its count is an atomic add. */
export class ReplayCounts {
  readonly table: Int32Array

  /** `buffer`: the control's, handed to each serving thread; a new one otherwise. */
  constructor (readonly buffer: SharedArrayBuffer = new SharedArrayBuffer((HELD + 1) * 4)) {
    this.table = new Int32Array(buffer)
  }

  /** How many times the request of `digest` was asked for before; counts this one. */
  next (digest: RequestDigest): number {
    const { table } = this
    const tag = digest.tag | 0
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < PROBES; i++) {
        const slot = ((digest.spot + i) & (SLOTS - 1)) * 2
        let held = Atomics.load(table, slot)
        if (held === 0 && Atomics.load(table, HELD) < REPLAY_KEYS) {
          held = Atomics.compareExchange(table, slot, 0, tag)
          if (held === 0) {
            Atomics.add(table, HELD, 1)
            held = tag
          }
        }
        if (held === tag) return Atomics.add(table, slot + 1, 1)
        // Another key's slot, or a free one the table has no room to give: the probe goes on, then starts over.
        if (held === 0) break
      }
      this.clear()
    }
    return 0
  }

  /** Every request counts from zero again. */
  clear (): void {
    for (let i = 0; i <= HELD; i++) Atomics.store(this.table, i, 0)
  }

  /** Distinct requests counted now. */
  get held (): number {
    return Atomics.load(this.table, HELD)
  }
}
