// `explore-replica generate` (npm run generate): seeded snapshots, the demo data/snapshot.json and benchmark files.
import { parseArgs } from 'node:util'
import { UsageError } from '../errors.js'
import {
  DEFAULT_COMPANIES, DEFAULT_GENERATED_AT, DEFAULT_ITEMS, DEFAULT_SEED, ITEMS_PER_COMPANY
} from '../generate/plan-snapshot.js'
import { writeSnapshot, type CompanySummary, type WriteOptions } from '../generate/write-snapshot.js'
import { formatBytes, PRETTY_MAX_ITEMS } from '../snapshot/write-snapshot-file.js'

const DEFAULT_OUT = 'data/snapshot.json'

export const GENERATE_USAGE = `Usage: explore-replica generate [options]   (npm run generate -- [options])
  --items N          items in en (default ${DEFAULT_ITEMS}); es and fr get ~35% and ~25% of it
  --languages L      explicit counts instead, e.g. en=200000,es=0 (order is kept)
  --seed S           PRNG seed (default ${DEFAULT_SEED})
  --companies C      company ids 1..C (default max(${DEFAULT_COMPANIES}, largest language / ${ITEMS_PER_COMPANY}))
  --generated-at T   ISO-8601 timestamp of the snapshot (default ${DEFAULT_GENERATED_AT})
  --format F         pretty | compact | jsonl (default: jsonl for a .jsonl or .ndjson --out; else pretty up to
                     ${PRETTY_MAX_ITEMS} items, else compact); pretty and compact are format v1 (compact: an item
                     per line), jsonl is JSON Lines
  --out FILE         output path (default ${DEFAULT_OUT})`

function integerArg (name: string, value: string | undefined, signed = false): number | undefined {
  if (value === undefined) return undefined
  if (!(signed ? /^-?\d+$/ : /^\d+$/).test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be ${signed ? 'an' : 'a non-negative'} integer, got ${JSON.stringify(value)}`)
  }
  return Number(value)
}

function languagesArg (value: string | undefined): Record<string, number> | undefined {
  if (value === undefined) return undefined
  const out: Record<string, number> = {}
  for (const part of value.split(',')) {
    const [code = '', count] = part.split('=')
    out[code.trim()] = integerArg(`languages ${code}`, count?.trim()) ?? Number.NaN
  }
  return out
}

export async function generateCommand (argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      items: { type: 'string' },
      languages: { type: 'string' },
      seed: { type: 'string' },
      companies: { type: 'string' },
      'generated-at': { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) {
    console.log(GENERATE_USAGE)
    return 0
  }
  if (values.format !== undefined && values.format !== 'pretty' && values.format !== 'compact' &&
      values.format !== 'jsonl') {
    throw new UsageError(`--format must be pretty, compact or jsonl, got ${JSON.stringify(values.format)}`)
  }
  const options: WriteOptions = {
    seed: integerArg('seed', values.seed, true) ?? DEFAULT_SEED,
    items: integerArg('items', values.items) ?? DEFAULT_ITEMS,
    languages: languagesArg(values.languages)
  }
  const companies = integerArg('companies', values.companies)
  if (companies !== undefined) options.companies = companies
  if (values['generated-at'] !== undefined) options.generatedAt = values['generated-at']
  if (values.format !== undefined) options.format = values.format

  const started = performance.now()
  // The generator's checks of the options (a language segment, a date) are usage errors too.
  const result = await writeSnapshot(values.out ?? DEFAULT_OUT, options).catch((error: unknown) => {
    throw error instanceof TypeError ? new UsageError(error.message) : error
  })
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const total = Object.values(result.items).reduce((a, b) => a + b, 0)

  console.log(
    `Wrote ${result.path}: ${formatBytes(result.bytes)} (${result.bytes} bytes, ${result.format}) in ${seconds} s`
  )
  console.log(
    `  items: ${Object.entries(result.items).map(([code, n]) => `${code} ${n}`).join(', ')} (${total} total, ` +
    `${total > 0 ? Math.round(result.bytes / total) : 0} bytes each)`
  )
  const first = Object.keys(result.items)[0] ?? ''
  const label = (c: CompanySummary): string => `#${c.id} ${c.name} (${c.items[first] ?? 0})`
  console.log(
    `  ${result.companies.length} companies; most items in ${first}: ${result.companies.slice(0, 3).map(label).join(', ')}`
  )
  const single = result.companies.filter(c => c.items[first] === 1)
  if (single.length > 0 && single.length <= 10) {
    console.log(`  exactly one item in ${first}: ${single.map(label).join(', ')}`)
  }
  for (const code of Object.keys(result.items).slice(1)) {
    const absent = result.companies.filter(c => (c.items[code] ?? 0) === 0)
    if (absent.length > 0) {
      console.log(
        `  no items in ${code}: ${absent.length} companies, e.g. #${absent.map(c => c.id).slice(0, 5).join(', #')}`
      )
    }
  }
  return 0
}
