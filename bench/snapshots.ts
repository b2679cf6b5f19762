// Benchmark snapshots from the project's generator, cached in bench/.data/ with the per-company counts the
// workloads are drawn from, keyed by every parameter and the generator's own source so a change regenerates.
import { createHash } from 'node:crypto'
import { createReadStream, readdirSync, statSync } from 'node:fs'
import { open, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { finished } from 'node:stream/promises'
import { writeSnapshot } from '../src/generate/write-snapshot.js'

export interface CompanyCounts {
  id: number
  /** Items per language linked to the company. */
  items: Record<string, number>
}

/** JSON: one format v1 document; JSON Lines: a header line, then one item a line. */
export type SnapshotFormat = 'json' | 'jsonl'

// From a million items on, `--format auto` writes JSON Lines: the bare JSON floor (readFile + JSON.parse)
// cannot even hold a 1.4 GB document as one string (V8's limit is about 512 MB), and JSON Lines is the
// format meant for snapshots that large.
export const AUTO_JSONL_ITEMS = 1_000_000

export function formatFor (total: number, choice: 'auto' | SnapshotFormat): SnapshotFormat {
  return choice !== 'auto' ? choice : total >= AUTO_JSONL_ITEMS ? 'jsonl' : 'json'
}

export interface SnapshotInfo {
  /** The size asked for, e.g. 200k (the generator's rounding makes the real total differ by a few items). */
  label: string
  format: SnapshotFormat
  key: string
  file: string
  bytes: number
  /** Items per language, as the generator wrote them. */
  items: Record<string, number>
  totalItems: number
  companies: CompanyCounts[]
  /** The generator's `items` (the `en` count) and company count. */
  params: { enItems: number, companies: number, seed: number }
  /** Seconds the generation took, or null when the cached file was reused. */
  generatedSeconds: number | null
}

// The generator's default language set adds 35% (es) and 25% (fr) on top of `items` (en).
const TOTAL_PER_EN_ITEM = 1.6
// "Many companies": one per 50 items in all languages; the generator makes their sizes Zipf-like.
const ITEMS_PER_COMPANY = 50

export function sizeLabel (total: number): string {
  if (total >= 1e6 && total % 1e5 === 0) return `${total / 1e6}M`
  if (total >= 1e3 && total % 100 === 0) return `${total / 1e3}k`
  return String(total)
}

async function generatorHash (root: string): Promise<string> {
  // The generator is a folder of modules: a change in any of them can change the snapshot. Import lines
  // are left out: moving a module changes where it is found, not what it writes.
  const dir = join(root, 'src', 'generate')
  const hash = createHash('sha256')
  for (const name of (await readdir(dir)).filter(n => n.endsWith('.ts')).sort()) {
    const code = (await readFile(join(dir, name), 'utf8')).split('\n').filter(line => !/^import .* from '[^']*'$/.test(line))
    hash.update(name).update(code.join('\n'))
  }
  return hash.digest('hex').slice(0, 10)
}

async function readCached (metaFile: string, label: string): Promise<SnapshotInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(metaFile, 'utf8')) as SnapshotInfo
    // A snapshot deleted or rewritten by hand is regenerated, not trusted.
    if ((await stat(info.file)).size !== info.bytes) return undefined
    // Meta files written before JSON Lines have no format: the file's extension tells.
    return { ...info, label, format: info.file.endsWith('.jsonl') ? 'jsonl' : 'json', generatedSeconds: null }
  } catch {
    return undefined
  }
}

/** The snapshot of `total` items (all languages together), generated on first use. */
export async function ensureSnapshot (root: string, dataDir: string, total: number, seed: number, format: SnapshotFormat): Promise<SnapshotInfo> {
  const label = sizeLabel(total)
  const enItems = Math.round(total / TOTAL_PER_EN_ITEM)
  const companies = Math.max(1, Math.round(total / ITEMS_PER_COMPANY))
  // JSON keeps the names it had before JSON Lines, so the snapshots already generated stay valid.
  const jsonlPrefix = `snapshot-${label}-jsonl-`
  const prefix = format === 'jsonl' ? jsonlPrefix : `snapshot-${label}-`
  const key = `${prefix}en${enItems}-c${companies}-s${seed}-g${await generatorHash(root)}`
  const file = join(dataDir, `${key}.${format}`)
  const metaFile = join(dataDir, `${key}.meta.json`)
  const cached = await readCached(metaFile, label)
  if (cached !== undefined) return cached

  // Files of the same size and format from an older generator or other parameters would only fill the disk.
  for (const name of await readdir(dataDir)) {
    const sameFormat = format === 'jsonl' || !name.startsWith(jsonlPrefix)
    if (name.startsWith(prefix) && sameFormat && !name.startsWith(key)) await rm(join(dataDir, name), { force: true })
  }
  const started = performance.now()
  const result = await writeSnapshot(file, { items: enItems, companies, seed, format: format === 'jsonl' ? 'jsonl' : 'compact' })
  // Hundreds of MB still being written back to disk would slow the first load measured after this.
  const handle = await open(result.path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
  const info: SnapshotInfo = {
    label,
    format,
    key,
    file: result.path,
    bytes: result.bytes,
    items: result.items,
    totalItems: Object.values(result.items).reduce((a, b) => a + b, 0),
    companies: result.companies.map(c => ({ id: c.id, items: c.items })),
    params: { enItems, companies, seed },
    generatedSeconds: (performance.now() - started) / 1000
  }
  // The meta file is written last: without it the snapshot counts as missing and is made again.
  await writeFile(metaFile, JSON.stringify(info))
  return info
}

/** Reads the file once so both the bare parse and the service start from a warm page cache. */
export async function warmPageCache (file: string): Promise<void> {
  await finished(createReadStream(file, { highWaterMark: 1 << 20 }).resume())
}

/**
 * For the experiments: the snapshot named on their command line, else the bench's cached 1M JSON Lines
 * file; exits with a usage line when neither exists (`npm run bench -- --sizes 1m` makes it).
 */
export function experimentSnapshot (named: string | undefined): string {
  if (named !== undefined) return resolve(named)
  const data = join(import.meta.dirname, '.data')
  let names: string[] = []
  try {
    names = readdirSync(data)
  } catch {} // no bench/.data yet: no snapshot either
  // The newest generator's, if several are cached (its name ends with the generator's hash, not a date).
  const million = names.filter(name => /^snapshot-1M-jsonl-.*\.jsonl$/.test(name)).sort((a, b) => statSync(join(data, b)).mtimeMs - statSync(join(data, a)).mtimeMs)[0]
  if (million !== undefined) return join(data, million)
  console.error('no 1M snapshot in bench/.data: run `npm run bench -- --sizes 1m` once, or name a SNAPSHOT')
  process.exit(2)
}
