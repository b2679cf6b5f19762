// The served state: immutable, per language, items already serialized in served order. Plain TypeScript,
// no Fastify: the route asks a LanguageListing for a count and a page and gets bytes back.

/**
 * A page's items as JSON array contents (`{…},{…}`, no brackets), not yet copied anywhere: the caller
 * allocates the whole answer once and has the items written into it.
 */
export class PageItems {
  constructor (
    private readonly bytes: Buffer,
    private readonly starts: Uint32Array,
    /** Ranks to take from, or null for consecutive ranks `from`..`to`. */
    private readonly ranks: Uint32Array | null,
    private readonly from: number,
    private readonly to: number
  ) {}

  get byteLength (): number {
    const { starts, ranks, from, to } = this
    if (to <= from) return 0
    if (ranks === null) return (starts[to] as number) - (starts[from] as number) - 1
    let length = 0
    for (let i = from; i < to; i++) {
      const rank = ranks[i] as number
      length += (starts[rank + 1] as number) - (starts[rank] as number)
    }
    return length - 1 // the last item's trailing comma is not part of the page
  }

  /** Writes the items into `target` at `at`; returns the number of bytes written. */
  copyTo (target: Buffer, at: number): number {
    const { bytes, starts, ranks, from, to } = this
    if (to <= from) return 0
    if (ranks === null) return bytes.copy(target, at, starts[from], (starts[to] as number) - 1)
    let written = 0
    for (let i = from; i < to; i++) {
      const rank = ranks[i] as number
      const end = i === to - 1 ? (starts[rank + 1] as number) - 1 : starts[rank + 1]
      written += bytes.copy(target, at + written, starts[rank], end)
    }
    return written
  }

  toString (): string {
    const out = Buffer.allocUnsafe(this.byteLength)
    this.copyTo(out, 0)
    return out.toString('utf8')
  }
}

export interface Page {
  count: number
  items: PageItems
}
// Unions of several companies are worth keeping: the same filter is usually paged through.
const UNION_CACHE_SIZE = 256

export class LanguageListing {
  /**
   * @param bytes every item's JSON followed by a comma, in served order (backdate desc, pk desc)
   * @param starts item i occupies bytes[starts[i], starts[i + 1] - 1); starts.length is size + 1
   * @param byCompany company id → ranks (indexes into served order) of its items, ascending
   */
  constructor (
    readonly language: string,
    private readonly bytes: Buffer,
    private readonly starts: Uint32Array,
    private readonly byCompany: ReadonlyMap<number, Uint32Array>
  ) {}

  private readonly unions = new Map<string, Uint32Array>()

  get size (): number {
    return this.starts.length - 1
  }

  get companyCount (): number {
    return this.byCompany.size
  }

  /** Items linked to a company, or every item when `companies` is null; a union when there are several. */
  page (companies: readonly number[] | null, offset: number, limit: number): Page {
    // Without a filter the ranks are the positions themselves: consecutive items, consecutive bytes.
    const ranks = companies === null ? null : this.ranksFor(companies)
    const count = ranks === null ? this.size : ranks.length
    const from = Math.min(offset, count)
    return { count, items: new PageItems(this.bytes, this.starts, ranks, from, Math.min(count, from + limit)) }
  }

  private ranksFor (companies: readonly number[]): Uint32Array {
    if (companies.length === 1) return this.byCompany.get(companies[0] as number) ?? EMPTY_RANKS
    const ids = [...new Set(companies)].sort((a, b) => a - b)
    if (ids.length === 1) return this.byCompany.get(ids[0] as number) ?? EMPTY_RANKS
    const key = ids.join(',')
    const cached = this.unions.get(key)
    if (cached !== undefined) {
      // Refresh its place so the cache drops the least recently used union first.
      this.unions.delete(key)
      this.unions.set(key, cached)
      return cached
    }
    const lists = ids.map(id => this.byCompany.get(id)).filter(list => list !== undefined)
    const union = mergeRanks(lists)
    if (this.unions.size >= UNION_CACHE_SIZE) this.unions.delete(this.unions.keys().next().value as string)
    this.unions.set(key, union)
    return union
  }
}

const EMPTY_RANKS = new Uint32Array(0)

/**
 * Union of ascending rank lists, each rank once, still ascending. Cost is linear in the lists' total
 * length (times log of their number), never in the size of the language.
 */
export function mergeRanks (lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 0) return EMPTY_RANKS
  if (lists.length === 1) return lists[0] as Uint32Array
  // Merge pairwise, smallest first, like a Huffman tree: each rank is copied O(log k) times.
  const queue = [...lists].sort((a, b) => a.length - b.length)
  while (queue.length > 1) {
    const merged = mergeTwo(queue.shift() as Uint32Array, queue.shift() as Uint32Array)
    let i = 0
    while (i < queue.length && (queue[i] as Uint32Array).length < merged.length) i++
    queue.splice(i, 0, merged)
  }
  return queue[0] as Uint32Array
}

function mergeTwo (a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length)
  let i = 0
  let j = 0
  let n = 0
  while (i < a.length && j < b.length) {
    const x = a[i] as number
    const y = b[j] as number
    if (x < y) { out[n++] = x; i++ } else if (y < x) { out[n++] = y; j++ } else { out[n++] = x; i++; j++ }
  }
  while (i < a.length) out[n++] = a[i++] as number
  while (j < b.length) out[n++] = b[j++] as number
  return n === out.length ? out : out.slice(0, n)
}

export interface SnapshotInfo {
  /** Where the snapshot was read from. */
  source: string
  /** A digest of the file's bytes: the same file gives the same version, on every replica. */
  version: string
  /** The snapshot's own version label (`generated_at`), if it has one. */
  generatedAt: string | null
  loadedAt: Date
}

/** One loaded snapshot: what a request is answered from, start to finish. */
export class SnapshotModel {
  constructor (
    readonly info: SnapshotInfo,
    private readonly listings: ReadonlyMap<string, LanguageListing>
  ) {}

  language (code: string): LanguageListing | undefined {
    return this.listings.get(code)
  }

  get languages (): string[] {
    return [...this.listings.keys()]
  }

  /** Items per language, for status reports. */
  itemCounts (): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const [code, listing] of this.listings) counts[code] = listing.size
    return counts
  }
}
