// Pages of a version derived by six change files, and a change file read and applied at SIZE, two builds in one process (an in-process control: on these
// machines whole processes run fast or slow throughout, ADR 032). Each build's own bench/page-speed.ts and model
// code make its model; the rounds alternate between them. `node --expose-gc --import tsx
// bench/experiments/derived-pages-ab.ts <other checkout> [SIZE] [PAGES] [ROUNDS]`, the other checkout with `npm ci`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const [other = '', size = 1_000_000, pages = 100_000, rounds = 7] = process.argv.slice(2).map((arg, n) => n === 0 ? arg : Number(arg)) as [string, number, number, number]
const FILES = 6

interface Listing { page: (companies: number[] | null, offset: number, limit: number) => { count: number, items: { views: () => Iterable<Uint8Array> } } }

interface Build { listing: Listing, applyOne: () => Promise<number> }

async function build (root: string, dir: string): Promise<Build> {
  const bench = await import(join(root, 'bench/page-speed.ts'))
  const { readChangeFile } = await import(join(root, 'src/snapshot/changes/read-change-file.ts'))
  const { deriveVersion } = await import(join(root, 'src/snapshot/model/derive-version.ts'))
  const built = await bench.buildModel(size)
  let model = built
  const file = join(dir, `${root.replaceAll('/', '_')}.jsonl`)
  for (let n = 0; n < FILES; n++) {
    await writeFile(file, bench.changeFileText(size, 1000, 100, n))
    model = await deriveVersion(model, await readChangeFile(file, { serving: true }))
  }
  // The change file's cost: the first of them read and applied again to the snapshot as built (ms).
  const applyOne = async (): Promise<number> => {
    await writeFile(file, bench.changeFileText(size, 1000, 100, 0))
    const started = performance.now()
    await deriveVersion(built, await readChangeFile(file, { serving: true }))
    return performance.now() - started
  }
  return { listing: model.language('en'), applyOne }
}

/** µs a page of 20 at `rounds` offsets spread over the listing. */
function timePages (listing: Listing, companies: number[] | null): number {
  const count = listing.page(companies, 0, 1).count
  let bytes = 0
  const started = performance.now()
  for (let i = 0; i < pages; i++) {
    const page = listing.page(companies, (i * 7919) % Math.max(1, count - 20), 20)
    for (const view of page.items.views()) bytes += view.length
  }
  if (bytes === 0) throw new Error('no bytes')
  return 1000 * (performance.now() - started) / pages
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

const dir = await mkdtemp(join(tmpdir(), 'derived-ab-'))
const builds = { this: resolve(import.meta.dirname, '../..'), other: resolve(other) }
const made = { this: await build(builds.this, dir), other: await build(builds.other, dir) }
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const applied = { this: [] as number[], other: [] as number[] }
for (let round = 0; round < rounds; round++) {
  for (const which of round % 2 === 0 ? ['this', 'other'] as const : ['other', 'this'] as const) {
    gc()
    applied[which].push(await made[which].applyOne())
  }
}
await rm(dir, { recursive: true })
gc()
const listings = { this: made.this.listing, other: made.other.listing }
console.log(`a change file of 1,000 upserts and 100 deletes read and applied: this ${median(applied.this).toFixed(0)} ms, other ${median(applied.other).toFixed(0)} ms; time this/other ${(median(applied.this) / median(applied.other)).toFixed(2)}× (this ${applied.this.map(ms => ms.toFixed(0)).join(' ')}; other ${applied.other.map(ms => ms.toFixed(0)).join(' ')})`)
const cases: Array<[string, number[] | null]> = [['unfiltered', null], ['one company', [7]], ['three companies', [7, 8, 9]]]
const times: Record<string, { this: number[], other: number[] }> = {}
for (const [label] of cases) times[label] = { this: [], other: [] }
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? ['this', 'other'] as const : ['other', 'this'] as const
  for (const [label, companies] of cases) for (const build of order) times[label]?.[build].push(timePages(listings[build], companies))
}
for (const [label] of cases) {
  const { this: mine, other: theirs } = times[label] as { this: number[], other: number[] }
  const ratios = mine.map((us, n) => (theirs[n] as number) / us)
  console.log(`${label}: this ${median(mine).toFixed(2)} µs, other ${median(theirs).toFixed(2)} µs a page; speed this/other ${(median(theirs) / median(mine)).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×)`)
}
