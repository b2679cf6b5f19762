// The walk: each language's unfiltered listing, then each company's pages per language (one company a request, so
// each item's companies are exact), then each count again to see what changed meanwhile.
import type { ContentItem } from '../schemas/content-item.js'
import { exploreUrl, readPage, type PageQuery, type SourcePage } from './explore-page.js'
import type { SourceClient } from './source-client.js'
import { CaptureError, NotExploreError } from '../errors.js'

/** DRF clamps `limit` to its max_limit without a word, so the size really given is read from the first page. */
export const ASK_PAGE_SIZE = 1000

interface WalkOptions {
  /** Without a trailing slash. */
  base: string
  languages: readonly string[]
  /** Sorted, without repeats. */
  companies: readonly number[]
  /** null: ASK_PAGE_SIZE. */
  pageSize: number | null
  /** Tasks at once (requests are also capped by the client). */
  concurrency: number
  client: SourceClient
  signal: AbortSignal
  progress?: WalkProgress
}

export interface WalkProgress {
  planned: (requests: number) => void
  fetched: () => void
  found: (items: number) => void
}

interface CapturedItem {
  pk: number
  backdate: string
  /** As served, without `companies`: as text, a fraction of a parsed object's memory. */
  json: string
  /** Ascending. */
  companies: number[]
}

interface LanguageCapture {
  code: string
  /** Of the unfiltered listing; null when it all fit on the first page. */
  pageSize: number | null
  countAtStart: number
  countAtEnd: number
  /** In the original's order: backdate, then pk, descending. */
  items: CapturedItem[]
  /** pks never in the unfiltered listing. */
  onlyThroughCompanies: number[]
  /** pks seen with different content on two pages, ascending. */
  changed: number[]
}

interface CountChange {
  language: string
  /** null: the unfiltered listing. */
  company: number | null
  from: number
  to: number
}

export interface WalkResult {
  languages: LanguageCapture[]
  emptyCompanies: number[]
  countChanges: CountChange[]
}

class LanguageRecord {
  readonly entries = new Map<number, CapturedItem>()
  readonly changed = new Set<number>()
  readonly onlyThroughCompanies = new Set<number>()
  pageSize: number | null = null
  limit = 0
  countAtStart = 0

  constructor (readonly code: string) {}

  /** True when the pk is new. Other content for a known pk replaces it, as a new walk would see it, and is reported. */
  record (item: ContentItem, company: number | null): boolean {
    const json = JSON.stringify(item)
    const entry = this.entries.get(item.pk)
    if (entry === undefined) {
      this.entries.set(item.pk, {
        pk: item.pk, backdate: item.backdate, json, companies: company === null ? [] : [company]
      })
      if (company !== null) this.onlyThroughCompanies.add(item.pk)
      return true
    }
    if (entry.json !== json) {
      this.changed.add(item.pk)
      entry.backdate = item.backdate
      entry.json = json
    }
    if (company !== null && entry.companies.at(-1) !== company) entry.companies.push(company)
    return false
  }

  checkComplete (countAtEnd: number): void {
    const held = this.entries.size - this.onlyThroughCompanies.size
    checkHeld(this.code, null, held, Math.min(this.countAtStart, countAtEnd))
  }

  result (countAtEnd: number): LanguageCapture {
    const items = [...this.entries.values()]
    for (const entry of items) {
      // A company's pages are walked in order but may repeat an item when the listing shifts under them.
      entry.companies = [...new Set(entry.companies)].sort((a, b) => a - b)
    }
    items.sort((a, b) => a.backdate < b.backdate ? 1 : a.backdate > b.backdate ? -1 : b.pk - a.pk)
    return {
      code: this.code,
      pageSize: this.pageSize,
      countAtStart: this.countAtStart,
      countAtEnd,
      items,
      onlyThroughCompanies: [...this.onlyThroughCompanies].sort((a, b) => a - b),
      changed: [...this.changed].sort((a, b) => a - b)
    }
  }
}

/** Fewer items than counted means some were skipped (an unstable order, or a change): the capture is incomplete. */
function checkHeld (code: string, company: number | null, held: number, counted: number): void {
  if (held >= counted) return
  throw new CaptureError(
    `${code}${company === null ? '' : `, company ${company}`}: the listing counts ${counted} items but its pages held ${held}: its order is not stable from page to page, or it changed during the walk; nothing written, capture again`
  )
}

/** More pages than this is no real site but a broken count, which would plan requests for ever. */
const MAX_PAGES = 10_000_000

export async function walkSource (options: WalkOptions): Promise<WalkResult> {
  return await new Walk(options).run()
}

class Walk {
  private readonly controller = new AbortController()
  private readonly signal: AbortSignal
  private readonly records: LanguageRecord[]
  private readonly nonEmpty = new Set<number>()
  private readonly countChanges: CountChange[] = []

  constructor (private readonly options: WalkOptions) {
    // The first failure aborts every request under way with itself as the reason: it is the walk's error.
    this.signal = AbortSignal.any([options.signal, this.controller.signal])
    this.records = options.languages.map(code => new LanguageRecord(code))
  }

  async run (): Promise<WalkResult> {
    const { languages, companies, progress } = this.options
    progress?.planned(languages.length * (2 + companies.length))
    await this.each(this.records, async record => {
      const ask = this.options.pageSize ?? ASK_PAGE_SIZE
      const first = await this.walkListing(record, null, ask)
      record.countAtStart = first.count
      record.pageSize = first.next === null ? null : first.results.length
      // When the whole language fits on one page, so does each company's part of it: ask the same.
      record.limit = first.next === null ? ask : first.results.length
    })
    await this.each(this.pairs(), async ([company, record]) => {
      const first = await this.walkListing(record, company, record.limit)
      if (first.count > 0) this.nonEmpty.add(company)
    })
    const ends = await this.map(this.records, async record => {
      const end = await this.page(record.code, { company: null, limit: 1, offset: 0 })
      this.noteCount(record.code, null, record.countAtStart, end.count)
      return end.count
    })
    for (const [i, record] of this.records.entries()) record.checkComplete(ends[i] ?? record.countAtStart)
    return {
      languages: this.records.map((record, i) => record.result(ends[i] ?? record.countAtStart)),
      emptyCompanies: companies.filter(id => !this.nonEmpty.has(id)),
      countChanges: this.countChanges
    }
  }

  /** Lazily: ten million ids are never all in memory as tasks. */
  private * pairs (): Generator<[number, LanguageRecord]> {
    for (const company of this.options.companies) {
      for (const record of this.records) yield [company, record]
    }
  }

  /** Every page of one listing, the first (returned) telling the count and size, the others in parallel by offset. */
  private async walkListing (record: LanguageRecord, company: number | null, limit: number): Promise<SourcePage> {
    const seen = new Set<number>()
    const first = await this.page(record.code, { company, limit, offset: 0 })
    this.take(record, first, company, seen)
    if (first.next === null) {
      checkHeld(record.code, company, seen.size, first.count)
      return first
    }
    // A next link on an empty first page: paging by offset would never end.
    if (first.results.length === 0) throw new NotExploreError(first.url, 'an empty first page with a next link')
    const size = first.results.length
    const pages = Math.ceil(first.count / size) - 1
    if (pages > MAX_PAGES) {
      throw new NotExploreError(first.url, `a count of ${first.count} items, more than ${MAX_PAGES} pages of ${size}`)
    }
    // Lazily: a large listing's offsets are never all in memory.
    const lastOffset = pages * size
    function * offsets (): Generator<number> {
      for (let offset = size; offset <= lastOffset; offset += size) yield offset
    }
    this.options.progress?.planned(pages)
    let last = first
    await this.each(offsets(), async offset => {
      const page = await this.page(record.code, { company, limit: size, offset })
      this.take(record, page, company, seen)
      if (page.count !== first.count) this.noteCount(record.code, company, first.count, page.count)
      if (offset === lastOffset) last = page
    })
    // Items added while the listing was walked push its end further: follow it until it ends.
    for (let offset = lastOffset + size; last.next !== null && offset < last.count; offset += size) {
      this.options.progress?.planned(1)
      last = await this.page(record.code, { company, limit: size, offset })
      this.take(record, last, company, seen)
      this.noteCount(record.code, company, first.count, last.count)
    }
    checkHeld(record.code, company, seen.size, Math.min(first.count, last.count))
    return first
  }

  private take (record: LanguageRecord, page: SourcePage, company: number | null, seen: Set<number>): void {
    let added = 0
    for (const item of page.results) {
      seen.add(item.pk)
      if (record.record(item, company)) added++
    }
    this.options.progress?.found(added)
  }

  private noteCount (language: string, company: number | null, from: number, to: number): void {
    if (from === to) return
    const known = this.countChanges.find(c => c.language === language && c.company === company)
    if (known === undefined) this.countChanges.push({ language, company, from, to })
    else known.to = to
  }

  private async page (language: string, query: PageQuery): Promise<SourcePage> {
    const url = exploreUrl(this.options.base, language, query)
    const page = readPage(url, await this.options.client.getJson(url, this.signal), query)
    this.options.progress?.fetched()
    return page
  }

  /** Runs `task` over `items` with the walk's concurrency; the first failure stops the others. */
  private async each<T> (items: Iterable<T>, task: (item: T) => Promise<void>): Promise<void> {
    const iterator = items[Symbol.iterator]()
    const worker = async (): Promise<void> => {
      try {
        for (let next = iterator.next(); next.done !== true; next = iterator.next()) {
          this.signal.throwIfAborted()
          await task(next.value)
        }
      } catch (error) {
        if (!this.signal.aborted) this.controller.abort(error)
        throw error
      }
    }
    const settled = await Promise.allSettled(Array.from({ length: this.options.concurrency }, worker))
    if (settled.some(s => s.status === 'rejected')) {
      // The first failure, or the interruption.
      throw this.signal.reason
    }
  }

  private async map<T, R> (items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]> {
    const out: R[] = new Array<R>(items.length)
    await this.each(items.keys(), async i => { out[i] = await task(items[i] as T) })
    return out
  }
}
