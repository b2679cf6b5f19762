// Plans a snapshot from its options: the companies, and per language the company links, burst days and pks.
import { LANGUAGE, LANGUAGE_PATTERN } from '../schemas/snapshot.js'
import { Rng, at, cumulativeOf } from './random-source.js'
import { NAME_FORMS, NAME_STEMS, NAME_TRADES, REAL_COMPANIES } from './text-banks.js'

export interface GenerateOptions {
  seed?: number
  /** Items in `en`, the other default languages scaled from it. */
  items?: number
  /** Item counts in output order, instead of the default en/es/fr. */
  languages?: Record<string, number> | undefined
  /** Ids 1 to this. */
  companies?: number
  generatedAt?: string
}

export const DEFAULT_SEED = 1
export const DEFAULT_ITEMS = 340
export const DEFAULT_COMPANIES = 30
export const DEFAULT_GENERATED_AT = '2026-11-20T09:30:00Z'

const DEFAULT_LANGUAGE_SHARES: ReadonlyArray<readonly [string, number]> = [['en', 1], ['es', 0.35], ['fr', 0.25]]
export const ITEMS_PER_COMPANY = 50
// Zipf exponent for company popularity: one company dominates, a long tail has a handful of items each.
const ZIPF_EXPONENT = 1.2
export const SPAN_DAYS = 3 * 365
export const DAY_MS = 86_400_000

// What needs a whole language in view (links, burst days, pks) is fixed up front, so items can stream one at a time.

export interface Companies {
  count: number
  /** names[id]; index 0 unused. */
  names: string[]
  /** Shuffled: id 1 is not automatically the biggest. */
  idByRank: Int32Array
}

export interface LanguagePlan {
  code: string
  count: number
  /** Per item, the lead company first. */
  links: number[][]
  burstDays: Int32Array
  burstCumulative: Float64Array
  pks: Int32Array
}

export interface Context {
  seed: number
  generatedAt: string
  endDay: number
  companies: Companies
  plans: LanguagePlan[]
}

function syntheticName (k: number): string {
  const stem = at(NAME_STEMS, k % NAME_STEMS.length)
  const trade = at(NAME_TRADES, Math.floor(k / NAME_STEMS.length) % NAME_TRADES.length)
  const combos = NAME_STEMS.length * NAME_TRADES.length
  if (k < combos) return `${stem} ${trade}`
  const round = Math.floor(k / combos)
  const form = at(NAME_FORMS, (round - 1) % NAME_FORMS.length)
  const lap = Math.floor((round - 1) / NAME_FORMS.length)
  return lap === 0 ? `${stem} ${trade} ${form}` : `${stem} ${trade} ${form} ${lap + 1}`
}

function buildCompanies (seed: number, count: number): Companies {
  const rng = new Rng(seed, 'companies')
  const idByRank = new Int32Array(count)
  for (let i = 0; i < count; i++) idByRank[i] = i + 1
  rng.shuffle(idByRank)
  const real = rng.shuffle([...REAL_COMPANIES])
  const names: string[] = new Array<string>(count + 1).fill('')
  for (let rank = 0; rank < count; rank++) {
    const id = idByRank[rank] ?? 0
    names[id] = rank < real.length ? at(real, rank) : syntheticName(rank - real.length)
  }
  return { count, names, idByRank }
}

// How many companies one item is linked to: mostly one or two, some none, a few many.
const LINKS_PER_ITEM = cumulativeOf([0.08, 0.46, 0.27, 0.12, 0.05, 0.02])
const MAX_LINKS = LINKS_PER_ITEM.length - 1

/** Largest-remainder apportionment of `total` over `weights`, no share above `cap`. */
function apportion (total: number, weights: Float64Array, cap: number): Int32Array {
  const n = weights.length
  const quotas = new Int32Array(n)
  let sum = 0
  for (const w of weights) sum += w
  const remainders: Array<[number, number]> = []
  let given = 0
  for (let r = 0; r < n; r++) {
    const exact = total * (weights[r] ?? 0) / sum
    const whole = Math.min(cap, Math.floor(exact))
    quotas[r] = whole
    given += whole
    remainders.push([r, exact - whole])
  }
  remainders.sort((a, b) => b[1] - a[1] || a[0] - b[0])
  for (let pass = 0; given < total && pass < 2; pass++) {
    // The second pass only runs when caps bit: hand what is left to whoever still has room, most popular first.
    const order = pass === 0 ? remainders.map(([r]) => r) : Array.from({ length: n }, (_, r) => r)
    for (const r of order) {
      if (given >= total) break
      const q = quotas[r] ?? 0
      if (q >= cap) continue
      quotas[r] = pass === 0 ? q + 1 : Math.min(cap, q + (total - given))
      given += (quotas[r] ?? 0) - q
    }
  }
  return quotas
}

function planLinks (seed: number, code: string, count: number, primary: boolean, companies: Companies): number[][] {
  const rng = new Rng(seed, `links:${code}`)
  const wanted = new Uint8Array(count)
  let total = 0
  let linkedItems = 0
  for (let i = 0; i < count; i++) {
    const k = Math.min(rng.weighted(LINKS_PER_ITEM), companies.count)
    wanted[i] = k
    total += k
    if (k > 0) linkedItems++
  }
  const C = companies.count
  const weights = new Float64Array(C)
  for (let r = 0; r < C; r++) {
    // Secondary languages jitter the weights so their rankings resemble, but do not copy, the first one.
    weights[r] = (primary ? 1 : 0.5 + rng.float()) / Math.pow(r + 1, ZIPF_EXPONENT)
  }
  const quotas = apportion(total, weights, linkedItems)
  if (C >= 3 && total >= 2 * C) {
    // Edge cases front-ends must meet whatever the seed: companies with one item (first language) or none (others).
    const before = (quotas[C - 1] ?? 0) + (quotas[C - 2] ?? 0)
    if (primary) {
      quotas[C - 1] = 1
      quotas[C - 2] = 1
    } else {
      quotas[C - 1] = 0
    }
    quotas[0] = (quotas[0] ?? 0) + before - (quotas[C - 1] ?? 0) - (quotas[C - 2] ?? 0)
  }

  let tokenCount = 0
  for (const q of quotas) tokenCount += q
  const tokens = new Int32Array(tokenCount)
  let t = 0
  quotas.forEach((q, rank) => { tokens.fill(companies.idByRank[rank] ?? 0, t, t + q); t += q })
  rng.shuffle(tokens)

  // Deal tokens to items in order; a token the item already holds is swapped with one a little further on.
  const links: number[][] = []
  let next = 0
  for (let i = 0; i < count; i++) {
    const mine: number[] = []
    for (let s = 0; s < (wanted[i] ?? 0) && next < tokens.length; s++) {
      const limit = Math.min(tokens.length, next + 64)
      let j = next
      while (j < limit && mine.includes(tokens[j] ?? 0)) j++
      if (j === limit) break
      const token = tokens[j] ?? 0
      tokens[j] = tokens[next] ?? 0
      tokens[next] = token
      next++
      mine.push(token)
    }
    links.push(mine)
  }
  // Leftovers (duplicates stranded at the end of the deck) go to random items that can still take them.
  for (; next < tokens.length; next++) {
    const token = tokens[next] ?? 0
    for (let attempt = 0; attempt < 200; attempt++) {
      const target = at(links, rng.int(0, count - 1))
      if (target.length > 0 && target.length < MAX_LINKS && !target.includes(token)) {
        target.push(token)
        break
      }
    }
  }
  return links
}

function planLanguage (
  seed: number, code: string, count: number, primary: boolean, companies: Companies
): LanguagePlan {
  const links = planLinks(seed, code, count, primary, companies)
  const rng = new Rng(seed, `plan:${code}`)
  // News breaks in bursts: a few days carry many items, which also exercises the pk tie-break.
  const bursts = Math.max(4, Math.round(count / 20))
  const burstDays = new Int32Array(bursts)
  const burstWeights: number[] = []
  for (let b = 0; b < bursts; b++) {
    burstDays[b] = rng.int(0, SPAN_DAYS - 1)
    burstWeights.push(1 / Math.pow(b + 1, 0.8))
  }
  // pks drawn from 4× the count: sparse like real ids (deleted pages) and unrelated to date or file order.
  const range = new Int32Array(count * 4 + 7)
  const base = rng.int(2, 9) * 10_000
  for (let v = 0; v < range.length; v++) range[v] = base + v
  for (let i = 0; i < count; i++) {
    const j = rng.int(i, range.length - 1)
    const picked = range[j] ?? 0
    range[j] = range[i] ?? 0
    range[i] = picked
  }
  return { code, count, links, burstDays, burstCumulative: cumulativeOf(burstWeights), pks: range.slice(0, count) }
}

function isNonNegativeInteger (n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

export function planSnapshot (options: GenerateOptions): Context {
  const seed = options.seed ?? DEFAULT_SEED
  if (!Number.isSafeInteger(seed)) throw new TypeError(`seed must be an integer, got ${seed}`)
  const items = options.items ?? DEFAULT_ITEMS
  if (!isNonNegativeInteger(items)) throw new TypeError(`items must be a non-negative integer, got ${items}`)
  const generatedAt = options.generatedAt ?? DEFAULT_GENERATED_AT
  const generatedMs = Date.parse(generatedAt)
  if (!DATE_TIME.test(generatedAt) || Number.isNaN(generatedMs)) {
    throw new TypeError(`generatedAt must be an ISO-8601 date-time such as ${DEFAULT_GENERATED_AT}, got ${generatedAt}`)
  }

  let counts: Array<[string, number]>
  if (options.languages !== undefined) {
    counts = Object.entries(options.languages)
    if (counts.length === 0) throw new TypeError('languages must name at least one language')
    for (const [code, n] of counts) {
      if (!LANGUAGE.test(code)) {
        throw new TypeError(`language segment ${JSON.stringify(code)} does not match ${LANGUAGE_PATTERN}`)
      }
      if (!isNonNegativeInteger(n)) {
        throw new TypeError(`item count for ${code} must be a non-negative integer, got ${n}`)
      }
    }
  } else {
    counts = DEFAULT_LANGUAGE_SHARES.map(([code, share]) => [code, Math.round(items * share)])
  }

  const largest = Math.max(...counts.map(([, n]) => n))
  const companyCount = options.companies ?? Math.max(DEFAULT_COMPANIES, Math.round(largest / ITEMS_PER_COMPANY))
  if (!isNonNegativeInteger(companyCount) || companyCount < 1) {
    throw new TypeError(`companies must be a positive integer, got ${companyCount}`)
  }
  const companies = buildCompanies(seed, companyCount)
  const plans = counts.map(([code, n], index) => planLanguage(seed, code, n, index === 0, companies))
  // Backdates end on the snapshot's own (UTC) day, never after it.
  const endDay = Math.floor(generatedMs / DAY_MS)
  return { seed, generatedAt, endDay, companies, plans }
}
