// The two workloads' request paths, drawn with a seeded PRNG from the generator's per-company counts (never
// from the server), so every run and both servers get exactly the same paths.
import type { CompanyCounts } from './snapshots.js'
import { Rng } from '../src/generate/random-source.js'

export interface Workload {
  name: 'hot' | 'cold'
  /** Paths of the warm-up run. */
  warmup: string[]
  /** Paths of the measured run, cycled through in order. */
  measured: string[]
  /** What the paths are made of, for the report. */
  mix: Record<string, number>
}

const EXPLORE = (lang: string): string => `/${lang}/api/internal/explore/`
// Share of hot requests in languages other than the first (en).
const HOT_OTHER_LANGUAGES = 0.2
const HOT_UNFILTERED = 0.05
// Cold page sizes: uniform over this range, so 100,000 distinct (company, limit, offset) triples exist even
// in the 10k snapshot.
const COLD_LIMIT_MIN = 5
const COLD_LIMIT_MAX = 35
// Rejection sampling for distinct paths gives up after this many draws per path wanted.
const DRAWS_PER_PATH = 200

/** Draws entries in proportion to their weights (binary search over the running sums). */
class Weighted<T> {
  private readonly sums: Float64Array

  constructor (private readonly entries: readonly T[], weight: (entry: T) => number) {
    this.sums = new Float64Array(entries.length)
    let sum = 0
    entries.forEach((entry, i) => { sum += weight(entry); this.sums[i] = sum })
    if (sum <= 0) throw new RangeError('nothing to draw from: every weight is 0')
  }

  draw (rng: Rng): T {
    const entry = this.entries[rng.weighted(this.sums)]
    if (entry === undefined) throw new RangeError('nothing to draw from')
    return entry
  }
}

function distinct (wanted: number, what: string, draw: () => string): string[] {
  const seen = new Set<string>()
  const limit = wanted * DRAWS_PER_PATH
  for (let draws = 0; seen.size < wanted && draws < limit; draws++) seen.add(draw())
  if (seen.size < wanted) throw new RangeError(`only ${seen.size} distinct ${what} paths exist for this snapshot, ${wanted} wanted`)
  return [...seen]
}

function languageWeights (items: Record<string, number>): Weighted<string> {
  const languages = Object.keys(items).filter(l => (items[l] ?? 0) > 0)
  const [first, ...others] = languages
  if (first === undefined) throw new RangeError('the snapshot has no items')
  const otherTotal = others.reduce((n, l) => n + (items[l] ?? 0), 0)
  // The first language gets 80%; the others share 20% in proportion to their sizes.
  return new Weighted(languages, l => l === first
    ? (otherTotal === 0 ? 1 : 1 - HOT_OTHER_LANGUAGES)
    : HOT_OTHER_LANGUAGES * (items[l] ?? 0) / otherTotal)
}

/**
 * Hot: what a front end asks for all day, as a request log would show it: `count` draws with replacement, so
 * popular pages repeat. Busy companies (drawn in proportion to their item counts, so the Zipf head
 * dominates), mostly their first page; some with another limit or a later offset; a few unfiltered
 * listings; 20% in the other languages.
 */
export function hotWorkload (items: Record<string, number>, companies: readonly CompanyCounts[], count: number, seed: number): Workload {
  const rng = new Rng(seed, 'hot')
  const languages = languageWeights(items)
  const byLanguage = new Map<string, Weighted<CompanyCounts>>()
  for (const lang of Object.keys(items)) {
    const linked = companies.filter(c => (c.items[lang] ?? 0) > 0)
    if (linked.length > 0) byLanguage.set(lang, new Weighted(linked, c => c.items[lang] ?? 0))
  }

  const draw = (): string => {
    const lang = languages.draw(rng)
    const base = EXPLORE(lang)
    const companyPick = byLanguage.get(lang)
    if (companyPick === undefined || rng.float() < HOT_UNFILTERED) {
      const kind = rng.float()
      if (kind < 0.6) return base
      if (kind < 0.8) return `${base}?limit=${rng.pick([20, 25, 50])}`
      const limit = rng.pick([10, 20])
      return `${base}?limit=${limit}&offset=${rng.int(1, 5) * limit}`
    }
    const company = companyPick.draw(rng)
    const n = company.items[lang] ?? 0
    const kind = rng.float()
    if (kind < 0.75) return `${base}?companies=${company.id}`
    if (kind < 0.88 || n <= 10) return `${base}?companies=${company.id}&limit=${rng.pick([5, 20, 25, 50, 100])}`
    // A later page, as a reader scrolling on: page k is ever less likely.
    const limit = rng.pick([10, 20])
    const lastPage = Math.max(1, Math.ceil(n / limit) - 1)
    const page = Math.min(lastPage, 1 + Math.floor(-Math.log(1 - rng.float()) * 1.5))
    return `${base}?companies=${company.id}&limit=${limit}&offset=${page * limit}`
  }
  const paths = Array.from({ length: count }, draw)

  const mix: Record<string, number> = { requests: paths.length, distinct: new Set(paths).size, unfiltered: 0, withLimit: 0, withOffset: 0 }
  for (const path of paths) {
    const lang = path.split('/')[1] ?? ''
    mix[`lang:${lang}`] = (mix[`lang:${lang}`] ?? 0) + 1
    if (!path.includes('companies=')) mix.unfiltered = (mix.unfiltered ?? 0) + 1
    if (path.includes('limit=')) mix.withLimit = (mix.withLimit ?? 0) + 1
    if (path.includes('offset=')) mix.withOffset = (mix.withOffset ?? 0) + 1
  }
  // Hot paths are requested over and over: the warm-up uses the same list.
  return { name: 'hot', warmup: paths, measured: paths, mix }
}

/**
 * Cold: distinct (language, company, limit, offset) pages. A (language, company) pair is drawn in
 * proportion to its item count and the offset uniformly inside its list, which is the same as drawing a
 * linked item at random and starting the page there: deep offsets in the biggest companies included.
 */
export function coldWorkload (companies: readonly CompanyCounts[], count: number, warmupCount: number, seed: number): Workload {
  const rng = new Rng(seed, 'cold')
  const pairs: Array<{ lang: string, id: number, n: number }> = []
  for (const company of companies) {
    for (const [lang, n] of Object.entries(company.items)) if (n > 0) pairs.push({ lang, id: company.id, n })
  }
  const pick = new Weighted(pairs, p => p.n)
  const paths = distinct(count + warmupCount, 'cold', () => {
    const { lang, id, n } = pick.draw(rng)
    return `${EXPLORE(lang)}?companies=${id}&limit=${rng.int(COLD_LIMIT_MIN, COLD_LIMIT_MAX)}&offset=${rng.int(0, n - 1)}`
  })
  const measured = paths.slice(0, count)
  let deepest = 0
  for (const path of measured) deepest = Math.max(deepest, Number(/offset=(\d+)/.exec(path)?.[1] ?? 0))
  return {
    name: 'cold',
    warmup: paths.slice(count),
    measured,
    mix: { paths: measured.length, warmupPaths: paths.length - count, pairs: pairs.length, deepestOffset: deepest, limitMin: COLD_LIMIT_MIN, limitMax: COLD_LIMIT_MAX }
  }
}
