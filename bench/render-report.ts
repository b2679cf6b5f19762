// `npm run bench:report`: BENCHMARKS.md's table of current figures, made from bench/results/latest.json
// (what `npm run bench` wrote last) and put between the file's two marker comments; the rest of the file
// is written by hand. Every field is read by its path and checked, so a renamed or missing field stops the
// render with that path instead of printing "undefined" into the report.
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { NOISY_CORES, RESULTS_VERSION, settledRises } from './report.js'

export const TABLE_START = '<!-- bench:table:start — written by `npm run bench:report` from bench/results/latest.json; edits here are lost -->'
export const TABLE_END = '<!-- bench:table:end -->'

export class ResultsShapeError extends Error {
  override name = 'ResultsShapeError'
}

/** A value of the results file and where it is, for messages that name the field. */
class Field {
  constructor (private readonly value: unknown, readonly path: string) {}

  at (key: string | number): Field {
    const path = typeof key === 'number' ? `${this.path}[${key}]` : `${this.path}.${key}`
    if (this.value === null || typeof this.value !== 'object') throw new ResultsShapeError(`${this.path} is not an object, so ${path} cannot be read`)
    return new Field((this.value as Record<string | number, unknown>)[key], path)
  }

  has (key: string): boolean {
    return this.value !== null && typeof this.value === 'object' && (this.value as Record<string, unknown>)[key] !== undefined
  }

  number (): number {
    if (typeof this.value !== 'number' || !Number.isFinite(this.value)) throw this.wrong('a number')
    return this.value
  }

  numberOrNull (): number | null {
    return this.value === null ? null : this.number()
  }

  string (): string {
    if (typeof this.value !== 'string') throw this.wrong('a string')
    return this.value
  }

  isString (): boolean {
    return typeof this.value === 'string'
  }

  /** An object of numbers (e.g. object name → bytes). */
  record (): Record<string, number> {
    if (this.value === null || typeof this.value !== 'object' || Array.isArray(this.value)) throw this.wrong('an object')
    return Object.fromEntries(Object.keys(this.value).map(key => [key, this.at(key).number()]))
  }

  items (): Field[] {
    if (!Array.isArray(this.value)) throw this.wrong('an array')
    return this.value.map((_, i) => this.at(i))
  }

  private wrong (expected: string): ResultsShapeError {
    const found = this.value === undefined ? 'missing' : `${JSON.stringify(this.value)?.slice(0, 40) ?? String(this.value)}`
    return new ResultsShapeError(`${this.path}: ${expected} expected, found ${found}`)
  }
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`
const ratio = (x: number): string => `${x.toFixed(2)}×`
const int = (x: number): string => Math.round(x).toLocaleString('en-US')
const ms = (x: number): string => `${x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2)} ms`
const seconds = (milliseconds: number): string => `${(milliseconds / 1000).toFixed(2)} s`
const maybe = (x: number | null, text: (x: number) => string): string => x === null ? 'n/a' : text(x)

/** The start after the first, with its STATE_DIR: from the version image the first wrote (ADR 033). */
function restartRows (): Array<[string, (size: Field) => string]> {
  const restart = (size: Field): Field | null => size.at('load').has('serviceRestart') ? size.at('load').at('serviceRestart') : null
  return [
    ['Restart from its version image: first answer (÷ first start)', size => {
      const again = restart(size)
      const first = size.at('load').at('service').at('readyMs').number()
      return again === null ? 'not run' : `${seconds(again.at('load').at('readyMs').number())} (**${ratio(again.at('load').at('readyMs').number() / first)}**)`
    }],
    ['Restart: image ÷ file; its bytes read alone', size => {
      const again = restart(size)
      const bytes = again?.at('imageBytes').numberOrNull() ?? null
      return again === null || bytes === null
        ? 'no image'
        : `**${ratio(bytes / size.at('fileBytes').number())}**; ${maybe(again.at('imageReadMs').numberOrNull(), ms)}`
    }],
    ['Restart: peak / settled RSS', size => {
      const again = restart(size)
      if (again === null) return 'not run'
      const load = again.at('load')
      return `${mb(load.at('peakRssBytes').number())} / ${mb(load.at('gcRssBytes').numberOrNull() ?? load.at('idleRssBytes').number())}`
    }]
  ]
}

/** One row of the table: its label, and its cell for one size. */
type Row = [string, (size: Field) => string]

function latencies (load: Field): string {
  return `${ms(load.at('p50Ms').number())} / ${ms(load.at('p99Ms').number())}`
}

function failures (load: Field): string {
  return `${load.at('errors').number()}·${load.at('non2xx').number()}·${load.at('timeouts').number()}`
}

function pages (workload: 'hot' | 'cold'): Row[] {
  return [
    [`${workload === 'hot' ? 'Hot' : 'Cold'} pages: req/s (÷ ceiling)`, size => {
      const w = size.at(workload)
      return `${int(w.at('explore').at('requestsPerSecond').number())} (**${ratio(w.at('ratio').number())}**)`
    }],
    [`${workload === 'hot' ? 'Hot' : 'Cold'} pages: p50 / p99`, size => latencies(size.at(workload).at('explore'))],
    [`Ceiling, ${workload}: req/s; p50 / p99`, size => {
      const c = size.at(workload).at('ceiling')
      return `${int(c.at('requestsPerSecond').number())}; ${latencies(c)}`
    }]
  ]
}

function reloadRows (): Row[] {
  // Every round's figure, the longest first in bold: the stall varies from run to run.
  const each = (size: Field, read: (reload: Field) => string): string => {
    const reloads = reloadsOf(size, 'service')
    return reloads.length === 0 ? 'not run' : reloads.map(read).join(', ')
  }
  return [
    ['Reload under load: took', size => each(size, r => maybe(r.at('reloadMs').numberOrNull(), seconds))],
    ['Reload: longest stall (event-loop lag max)', size => {
      const longest = size.at('figures').at('reloadStallMaxMs').numberOrNull()
      const all = each(size, r => maybe(r.at('lagMaxMs').numberOrNull(), ms))
      return all === 'not run' ? all : `**${maybe(longest, ms)}**${all.includes(',') ? ` (rounds: ${all})` : ''}`
    }],
    ['Reload: lag max until swapped; the same load before it', size => each(size, r => `${lagField(r, 'lagMaxUntilCountedMs')}; ${lagField(r, 'lagMaxBeforeMs')}`)],
    ['Reload: event-loop lag p99; client p99 / max', size => each(size, r => {
      const load = r.at('load')
      return `${maybe(r.at('lagP99Ms').numberOrNull(), ms)}; ${ms(load.at('p99Ms').number())} / ${ms(load.at('maxMs').number())}`
    })],
    ['Reload: peak RSS (RSS before)', size => each(size, r => `${mb(r.at('peakRssBytes').number())} (${mb(r.at('rssBeforeBytes').number())})`)]
  ]
}

/** A size's reloads by one contender (results from before --reload-baseline have only the service's). */
function reloadsOf (size: Field, contender: 'service' | 'baseline'): Field[] {
  const reloads = size.has('reloads') ? size.at('reloads').items() : []
  return reloads.filter(r => (r.has('contender') ? r.at('contender').string() : 'service') === contender)
}

/** The baseline's reloads, round by round, when it reloaded too (--reload-baseline). */
function baselineReloadRows (): Row[] {
  const each = (size: Field, read: (reload: Field) => string): string => reloadsOf(size, 'baseline').map(read).join(', ') || 'not run'
  return [
    ['Baseline reload under load: took', size => each(size, r => maybe(r.at('reloadMs').numberOrNull(), seconds))],
    ['Baseline reload: stall (event-loop lag max)', size => each(size, r => maybe(r.at('lagMaxMs').numberOrNull(), ms))]
  ]
}

/** A lag figure added to the results later: 'not measured' in older ones. */
function lagField (result: Field, key: 'lagMaxUntilCountedMs' | 'lagMaxBeforeMs'): string {
  return result.has(key) ? maybe(result.at(key).numberOrNull(), ms) : 'not measured'
}

/** The change workload (BENCHMARKS.md's change-file goals), where it ran: a change file applied under load. */
function changeRows (): Row[] {
  // Since the steady load, a result per load: each says its connections.
  const each = (size: Field, read: (change: Field) => string): string => {
    const changes = size.has('changes') ? size.at('changes').items() : []
    return changes.length === 0 ? 'not run' : changes.map(c => `${c.has('connections') ? `${int(c.at('connections').number())} conn.: ` : ''}${read(c)}`).join(', ')
  }
  // The settled reading is one per size, carried by the result of the bench's own load.
  const settledOf = (size: Field, read: (settled: Field) => string): string => {
    const changes = size.has('changes') ? size.at('changes').items() : []
    const carrier = changes.find(c => c.has('settled'))
    return changes.length === 0 ? 'not run' : carrier === undefined ? 'not measured' : read(carrier.at('settled'))
  }
  return [
    ['Change file under load: applied after (its size)', size => each(size, c => `${maybe(c.at('reloadMs').numberOrNull(), ms)} (${int(c.at('upserts').number())} upserts, ${int(c.at('deletes').number())} deletes, ${mb(c.at('changeBytes').number())})`)],
    ['Change file: stall (event-loop lag max); RSS before → after', size => each(size, c => `${maybe(c.at('lagMaxMs').numberOrNull(), ms)}; ${mb(c.at('rssBeforeBytes').number())} → ${mb(c.at('rssAfterBytes').number())}`)],
    // The whole window's lag max holds the minutes of load after the change too: these two say which stalled.
    ['Change file: lag max until applied; the same load before it', size => each(size, c => `${lagField(c, 'lagMaxUntilCountedMs')}; ${lagField(c, 'lagMaxBeforeMs')}`)],
    ['Change file: applied in (the service\'s log, after the debounce)', size => each(size, c => c.has('appliedMs') ? maybe(c.at('appliedMs').numberOrNull(), ms) : 'not measured')],
    ['Change file: settled RSS, no requests: the first file after a start, then each next (goal ≤ + 3× the file)', size => settledOf(size, settled => {
      const numbers = (key: string): number[] => settled.at(key).items().map(value => value.number())
      return settledRises({ fileBytes: numbers('fileBytes'), beforeBytes: settled.at('beforeBytes').number(), afterBytes: numbers('afterBytes') })
    })]
  ]
}

/** The fleet workload (--fleet), on the size it ran at: a string in the results says why it did not run. */
function fleetRows (): Row[] {
  const each = (size: Field, read: (fleet: Field) => string): string => {
    if (!size.has('fleet')) return 'not run'
    const fleet = size.at('fleet')
    return fleet.isString() ? `not run: ${fleet.string()}` : read(fleet)
  }
  return [
    // Results from before the join row have no joinMs. Both join at once, from moto: no ratio to a local parse.
    ['Fleet join (2 replicas at once, S3): first answer, each; from the image, snapshot kept after', size => each(size, f => {
      if (!f.has('joinMs')) return 'not measured'
      const kept = f.has('keptMs') ? f.at('keptMs').items().map(after => maybe(after.numberOrNull(), seconds)).join(', ') : 'not measured'
      return `${f.at('joinMs').items().map(join => seconds(join.number())).join(', ')}; ${kept}`
    })],
    ['Fleet (2 replicas, nginx, S3): a change served by each after (poll)', size => each(size, f =>
      `${f.at('servedAfterMs').items().map(after => maybe(after.numberOrNull(), seconds)).join(', ')} (${f.at('pollSeconds').number()} s)`)],
    ['Fleet: bytes each replica downloaded for it (change file; snapshot)', size => each(size, f =>
      `${f.at('downloaded').items().map(replica => int(Object.values(replica.record()).reduce((sum, n) => sum + n, 0))).join(', ')} (${int(f.at('changeBytes').number())}; ${int(f.at('snapshotBytes').number())})`)]
  ]
}

function baselineRows (): Row[] {
  const versus = (key: 'hot' | 'cold' | 'firstAnswer' | 'peakRss' | 'settledRss') => (size: Field): string =>
    `**${ratio(size.at('figures').at('versusBaseline').at(key).number())}**`
  return [
    ['Hot req/s ÷ baseline', versus('hot')],
    ['Cold req/s ÷ baseline', versus('cold')],
    ['First answer ÷ baseline', versus('firstAnswer')],
    ['Peak RSS ÷ baseline', versus('peakRss')],
    ['Settled RSS ÷ baseline', versus('settledRss')]
  ]
}

/** The generated section: what was run where, then one table with a column per size. */
export function renderTable (results: unknown): string {
  const root = new Field(results, 'results')
  const version = root.at('resultsVersion').number()
  if (version !== RESULTS_VERSION) {
    throw new ResultsShapeError(`results.resultsVersion is ${version}, this renderer reads ${RESULTS_VERSION}: run npm run bench again`)
  }
  const machine = root.at('machine')
  const service = root.at('service')
  const sizes = root.at('sizes').items()
  if (sizes.length === 0) throw new ResultsShapeError('results.sizes is empty')
  const withBaseline = root.has('baseline')
  const dirty = service.at('dirtyFiles').number()
  const baseline = withBaseline ? root.at('baseline') : undefined

  const rows: Row[] = [
    ...pages('hot'),
    ...pages('cold'),
    ['Errors · non-2xx · timeouts (hot; cold)', size => `${failures(size.at('hot').at('explore'))}; ${failures(size.at('cold').at('explore'))}`],
    ['First answer (÷ bare parse)', size => {
      const load = size.at('load')
      return `${seconds(load.at('service').at('readyMs').number())} (**${ratio(size.at('figures').at('firstAnswerVsBare').number())}** of ${seconds(load.at('bare').at('readyMs').number())})`
    }],
    ['Peak RSS, first load', size => mb(size.at('load').at('service').at('peakRssBytes').number())],
    ['Settled RSS (÷ file)', size => {
      const figures = size.at('figures')
      const forced = size.at('load').at('service').at('gcRssBytes').numberOrNull() !== null
      return `${mb(figures.at('settledRssBytes').number())}${forced ? '' : '†'} (**${ratio(figures.at('settledRssVsFile').number())}**)`
    }],
    ...(sizes.some(size => size.at('load').has('serviceRestart')) ? restartRows() : []),
    ...reloadRows(),
    ...(sizes.some(size => reloadsOf(size, 'baseline').length > 0) ? baselineReloadRows() : []),
    ...(sizes.some(size => size.has('changes')) ? changeRows() : []),
    ...(sizes.some(size => size.has('fleet')) ? fleetRows() : []),
    ...(withBaseline ? baselineRows() : []),
    ['Other processes, most cores in a run', size => {
      const runs = [size.at('hot').at('explore'), size.at('hot').at('ceiling'), size.at('cold').at('explore'), size.at('cold').at('ceiling')]
      const most = Math.max(...runs.map(r => r.at('otherCores').number()))
      return `${most.toFixed(2)}${most > NOISY_CORES ? ' ⚠' : ''}`
    }]
  ]

  const started = root.at('startedAt').string()
  const lines = [
    `Run \`${root.at('command').string()}\`, ${started.slice(0, 10)} ${started.slice(11, 16)} UTC, at commit ` +
      `${service.at('commit').string()}${dirty > 0 ? ` + ${dirty} uncommitted files` : ''}` +
      `${service.at('args').items().length > 0 ? ` with \`${service.at('args').items().map(a => a.string()).join(' ')}\`` : ''}; ` +
      `WORKERS=${service.at('workers').string()}; load client ${root.has('client') ? root.at('client').string() : 'autocannon'}.`,
    `Machine: ${machine.at('nproc').number()} cores (${machine.at('cpu').string()}), ${mb(machine.at('memoryBytes').number())} RAM, ` +
      `Linux ${machine.at('kernel').string()}, Node ${machine.at('node').string()}.`,
    ...(baseline === undefined
      ? []
      : [`Baseline: \`${baseline.at('dir').string()}\` at ${baseline.at('commit').string()}` +
          `${baseline.at('args').items().length > 0 ? ` with \`${baseline.at('args').items().map(a => a.string()).join(' ')}\`` : ''}; ` +
          `WORKERS=${baseline.at('workers').string()}.`]),
    ''
  ]
  const busy = root.at('busyCoresBefore').number()
  const header = sizes.map(size => `${size.at('label').string()} ${size.at('format').string() === 'jsonl' ? 'JSON Lines' : 'JSON'} ` +
    `(${int(size.at('totalItems').number())} items, ${mb(size.at('fileBytes').number())})`)
  lines.push(`| | ${header.join(' | ')} |`)
  lines.push(`|---|${sizes.map(() => '--:').join('|')}|`)
  for (const [label, cell] of rows) lines.push(`| ${label} | ${sizes.map(cell).join(' | ')} |`)
  lines.push('')
  const notes = [
    'Ratios in bold.',
    sizes.some(size => size.at('load').at('service').at('gcRssBytes').numberOrNull() === null)
      ? '† no GC could be forced (port 9229 taken): RSS after idling instead.'
      : '',
    busy > NOISY_CORES || lines.some(line => line.includes('⚠'))
      ? `⚠ Other processes were busy (${busy.toFixed(2)} cores before the run): these figures are disturbed; compare ratios from one run, not absolute figures.`
      : ''
  ].filter(note => note !== '')
  lines.push(notes.join(' '))
  return lines.join('\n')
}

/** `document` with the text between its markers replaced by `table`; fails when the markers are not there once each. */
export function replaceTable (document: string, table: string): string {
  const start = document.indexOf(TABLE_START)
  const end = document.indexOf(TABLE_END)
  if (start === -1 || end === -1 || end < start || document.indexOf(TABLE_START, start + 1) !== -1 || document.indexOf(TABLE_END, end + 1) !== -1) {
    throw new Error(`the document needs the marker lines once each, in order:\n${TABLE_START}\n${TABLE_END}`)
  }
  return `${document.slice(0, start + TABLE_START.length)}\n${table}\n${document.slice(end)}`
}

async function main (): Promise<void> {
  const root = dirname(dirname(fileURLToPath(import.meta.url)))
  const [resultsFile = join(root, 'bench', 'results', 'latest.json'), documentFile = join(root, 'BENCHMARKS.md')] = process.argv.slice(2)
  const table = renderTable(JSON.parse(await readFile(resultsFile, 'utf8')))
  await writeFile(documentFile, replaceTable(await readFile(documentFile, 'utf8'), table))
  process.stdout.write(`${documentFile}: the table written from ${resultsFile}\n`)
}

// Run as a script (not imported by the test).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((error: unknown) => {
    console.error(`bench:report: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  })
}
