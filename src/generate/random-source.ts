// Seeded random streams: the snapshot generator, the benchmark's workloads, a demo server's simulated trouble.

// Everything derives from (seed, stream name), so adding a draw in one stream never shifts another.
function hashString (text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return avalanche(h)
}

/** murmur3's finalizer: every bit of `h` moves about half of the result's. */
export function avalanche (h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** One stream of draws, fixed by (seed, stream name). */
export class Rng {
  private state: number

  constructor (seed: number, stream: string) {
    this.state = hashString(`${seed}/${stream}`)
  }

  /** The stream started again from a 32-bit state: a demo server's draws for one request (ADR 041). */
  reseed (state: number): this {
    this.state = state | 0
    return this
  }

  // mulberry32
  float (): number {
    this.state = (this.state + 0x6d2b79f5) | 0
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** Integer in [min, max]. */
  int (min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1))
  }

  chance (p: number): boolean {
    return this.float() < p
  }

  pick<T> (list: readonly T[]): T {
    return at(list, Math.floor(this.float() * list.length))
  }

  /** Index drawn from cumulative weights. */
  weighted (cumulative: Float64Array): number {
    const target = this.float() * (cumulative[cumulative.length - 1] ?? 0)
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((cumulative[mid] ?? 0) > target) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  shuffle<T extends { length: number, [index: number]: unknown }> (list: T): T {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(this.float() * (i + 1))
      const tmp = list[i]
      list[i] = list[j]
      list[j] = tmp
    }
    return list
  }
}

// An element that must exist: a miss is a bug, not an `undefined` to carry along.
export function at<T> (list: readonly T[], index: number): T {
  const value = list[index]
  if (value === undefined) throw new RangeError(`index ${index} outside a list of ${list.length}`)
  return value
}

/** Running sums of `weights`, the form Rng.weighted draws from. */
export function cumulativeOf (weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length)
  let sum = 0
  weights.forEach((w, i) => { sum += w; out[i] = sum })
  return out
}
