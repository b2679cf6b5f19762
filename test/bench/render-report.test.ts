// BENCHMARKS.md's table is made from the bench's results JSON (bench/render-report.ts): a fixture (a real
// `npm run bench -- --quick` result) renders into the table, a missing or renamed field stops the render
// with its path, and the committed BENCHMARKS.md carries the table its committed results give.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderTable, replaceTable, ResultsShapeError, TABLE_END, TABLE_START } from '../../bench/render-report.js'
import { checkTargets, markdown, settledRises, sizeFigures, type BenchResult, type SizeResult } from '../../bench/report.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const fixture = (): Record<string, any> => JSON.parse(readFileSync(`${ROOT}test/fixtures/bench/results.json`, 'utf8'))

/** Deletes the value at a dotted path (numbers index arrays) and returns it. */
function take (object: Record<string, any>, path: string): unknown {
  const keys = path.split('.')
  const last = keys.pop() as string
  const parent = keys.reduce<any>((at, key) => at[key], object)
  const value = parent[last]
  delete parent[last]
  return value
}

t.test('the fixture renders into one table: a column per size, a row per figure, the run described above it', async t => {
  const results = fixture()
  const table = renderTable(results)
  const lines = table.split('\n')
  t.match(lines[0], `Run \`${results.command as string}\``)
  t.match(lines[0], `at commit ${results.service.commit as string}`)
  t.match(lines[0], 'WORKERS=1; load client autocannon.', 'results from before the client was recorded: autocannon')
  t.match(renderTable({ ...results, client: 'wrk 4.1.0' }).split('\n')[0], 'WORKERS=1; load client wrk 4.1.0.')
  t.match(lines[1], `Machine: ${results.machine.nproc as number} cores (${results.machine.cpu as string})`)
  t.match(lines[1], `Node ${results.machine.node as string}`)
  const header = lines.find(line => line.startsWith('| |'))
  t.equal(header, '| | 10k JSON (10,001 items, 13.8 MB) | 50k JSON (50,001 items, 69.1 MB) |')
  const rows = lines.filter(line => line.startsWith('| ') && !line.startsWith('| |')).map(line => line.split(' | ')[0]?.slice(2))
  t.same(rows, [
    'Hot pages: req/s (÷ ceiling)', 'Hot pages: p50 / p99', 'Ceiling, hot: req/s; p50 / p99',
    'Cold pages: req/s (÷ ceiling)', 'Cold pages: p50 / p99', 'Ceiling, cold: req/s; p50 / p99',
    'Errors · non-2xx · timeouts (hot; cold)', 'First answer (÷ bare parse)', 'Peak RSS, first load', 'Settled RSS (÷ file)',
    'Reload under load: took', 'Reload: longest stall (event-loop lag max)', 'Reload: lag max until swapped; the same load before it', 'Reload: event-loop lag p99; client p99 / max',
    'Reload: peak RSS (RSS before)', 'Other processes, most cores in a run'
  ])
  // Figures as the fixture holds them, formatted.
  t.match(table, '| Hot pages: req/s (÷ ceiling) | 6,835 (**1.19×**) | 2,107 (**0.54×**) |')
  t.match(table, '| Cold pages: p50 / p99 | 5.43 ms / 159 ms | 4.50 ms / 119 ms |')
  t.match(table, '| First answer (÷ bare parse) | 4.82 s (**3.30×** of 1.46 s) | 28.83 s (**2.04×** of 14.13 s) |')
  t.match(table, '| Settled RSS (÷ file) | 99.2 MB (**7.21×**) | 154 MB (**2.23×**) |')
  t.match(table, '| Reload: longest stall (event-loop lag max) | **990 ms** | **189 ms** |')
  t.match(table, '| Reload: lag max until swapped; the same load before it | not measured; not measured | not measured; not measured |', 'results from before these figures say so')
  t.match(table, '| Other processes, most cores in a run | 1.78 ⚠ | 1.49 ⚠ |')
  t.match(lines[lines.length - 1], /^Ratios in bold\. ⚠ Other processes were busy \(2\.01 cores before the run\)/)
})

t.test('with --reload-baseline the baseline\'s reloads get rows of their own, and the service\'s rows keep only its own', async t => {
  const results = fixture()
  const size = results.sizes[1]
  const service = size.reloads[0]
  size.reloads = [{ ...service, contender: 'service' }, { ...service, contender: 'baseline', reloadMs: 7250, lagMaxMs: 61.5 }]
  size.figures = sizeFigures(size)
  t.same(size.figures.baselineReload, { stallMaxMs: 61.5, msMax: 7250 })
  t.equal(size.figures.reloadStallMaxMs, service.lagMaxMs, 'the service\'s longest stall is its own')
  const table = renderTable(results)
  t.match(table, '| Baseline reload under load: took | not run | 7.25 s |')
  t.match(table, '| Baseline reload: stall (event-loop lag max) | not run | 61.5 ms |')
  t.notMatch(table.split('\n').find(line => line.startsWith('| Reload under load: took')), '7.25 s')
  t.notMatch(renderTable(fixture()), 'Baseline reload', 'no such rows when the baseline did not reload')
})

t.test('a field the table reads that is missing stops the render, naming the field', async t => {
  for (const path of [
    'machine.node', 'machine.cpu', 'service.commit', 'service.workers', 'command', 'startedAt',
    'sizes.0.hot.ratio', 'sizes.0.cold.ceiling.p99Ms', 'sizes.1.load.bare.readyMs', 'sizes.1.load.service.gcRssBytes',
    'sizes.0.figures.firstAnswerVsBare', 'sizes.0.figures.settledRssVsFile', 'sizes.1.figures.reloadStallMaxMs',
    'sizes.1.reloads.0.reloadMs', 'sizes.1.reloads.0.load.maxMs', 'sizes.0.fileBytes'
  ]) {
    const results = fixture()
    take(results, path)
    const where = path.replace(/\.(\d+)/g, '[$1]')
    t.throws(() => renderTable(results), { name: 'ResultsShapeError', message: new RegExp(`^results\\.${where.replace(/[.[\]]/g, '\\$&')}: .* expected, found missing`) }, path)
  }
})

t.test('a renamed field stops the render too: the old name is missing, the new one is not read', async t => {
  const results = fixture()
  for (const size of results.sizes) size.figures.settledRssRatio = take(size, 'figures.settledRssVsFile')
  t.throws(() => renderTable(results), new ResultsShapeError('results.sizes[0].figures.settledRssVsFile: a number expected, found missing'))
})

t.test('a results file of another version is refused', async t => {
  const results = fixture()
  results.resultsVersion = 2
  t.throws(() => renderTable(results), { name: 'ResultsShapeError', message: /resultsVersion is 2/ })
})

t.test('a run with a baseline adds its ratios, and needs them', async t => {
  const results = fixture()
  results.baseline = { ...results.service, dir: '/tmp/base', commit: 'abc1234' }
  for (const size of results.sizes) size.figures.versusBaseline = { hot: 1.1, cold: 0.95, firstAnswer: 1, peakRss: 0.9, settledRss: 1.02 }
  const table = renderTable(results)
  t.match(table, 'Baseline: `/tmp/base` at abc1234; WORKERS=1.')
  t.match(table, '| Hot req/s ÷ baseline | **1.10×** | **1.10×** |')
  t.match(table, '| Settled RSS ÷ baseline | **1.02×** | **1.02×** |')
  delete results.sizes[1].figures.versusBaseline
  t.throws(() => renderTable(results), { message: /results\.sizes\[1\]\.figures\.versusBaseline is not an object/ })
})

t.test('a run without the reload workload says so', async t => {
  const results = fixture()
  for (const size of results.sizes) {
    delete size.reloads
    size.figures.reloadStallMaxMs = null
  }
  t.match(renderTable(results), '| Reload under load: took | not run | not run |')
})

t.test('the table replaces what is between the markers and nothing else', async t => {
  const document = `# Title\n\nBefore.\n\n${TABLE_START}\nold table\n${TABLE_END}\n\nAfter.\n`
  t.equal(replaceTable(document, 'new table'), `# Title\n\nBefore.\n\n${TABLE_START}\nnew table\n${TABLE_END}\n\nAfter.\n`)
  t.throws(() => replaceTable('# No markers\n', 'x'), /marker lines once each/)
  t.throws(() => replaceTable(`${TABLE_END}\n${TABLE_START}\n`, 'x'), /marker lines once each/)
  t.throws(() => replaceTable(`${TABLE_START}\n${TABLE_END}\n${TABLE_START}\n`, 'x'), /marker lines once each/)
})

t.test('BENCHMARKS.md carries the table bench/results/latest.json gives (after a bench run: npm run bench:report)', async t => {
  const document = readFileSync(`${ROOT}BENCHMARKS.md`, 'utf8')
  const latest: unknown = JSON.parse(readFileSync(`${ROOT}bench/results/latest.json`, 'utf8'))
  t.equal(replaceTable(document, renderTable(latest)), document)
})

t.test('the headline figures: the longest of the rounds, and unknown when a reload never counted', async t => {
  const size = fixture().sizes[1] as SizeResult
  const [round] = size.reloads ?? []
  if (round === undefined) throw new Error('the fixture has a reload round')
  const rounds = [{ ...round, lagMaxMs: 20, reloadMs: 900 }, { ...round, lagMaxMs: 45.5, reloadMs: 1200 }, { ...round, lagMaxMs: null, reloadMs: 700 }]
  const figures = sizeFigures({ ...size, reloads: rounds })
  t.equal(figures.reloadStallMaxMs, 45.5)
  t.equal(figures.reloadMsMax, 1200)
  t.equal(sizeFigures({ ...size, reloads: [...rounds, { ...round, reloadMs: null }] }).reloadMsMax, null)
  t.equal(sizeFigures({ ...size, reloads: undefined }).reloadStallMaxMs, null)
  t.equal(figures.firstAnswerVsBare, size.load.service.readyMs / size.load.bare.readyMs)
  t.equal(figures.versusBaseline, undefined)
})

t.test('the bench\'s own report (latest.md) renders the same results, with and without a baseline', async t => {
  const results = fixture() as BenchResult
  t.same(checkTargets(results.sizes), results.targets)
  const text = markdown(results)
  t.match(text, '| 10k | hot | 6,835 | 5,760 | **1.19×** |')
  t.match(text, '**Warning: other processes were busy**')
  t.match(text, '### Reload under load')
  const withBaseline = fixture() as BenchResult
  withBaseline.baseline = { ...withBaseline.service, dir: '/tmp/base', workers: '2' }
  for (const size of withBaseline.sizes) {
    size.hot.baseline = { result: size.hot.explore, ratio: 1, roundRatios: [1] }
    size.cold.baseline = { result: size.cold.explore, ratio: 1, roundRatios: [1] }
    size.load.baseline = { load: size.load.service, afterTrafficRssBytes: 1e8, afterTrafficPeakRssBytes: 2e8 }
  }
  const versus = markdown(withBaseline)
  t.match(versus, 'Baseline: `/tmp/base/dist/server.js`')
  t.match(versus, 'WORKERS=2: RSS and CPU figures are the primary')
  t.match(versus, 'Service ÷ baseline')
})

t.test('the fleet workload renders where it ran: when each replica served the change and what it downloaded; or why it did not run', async t => {
  const results = fixture()
  const size = results.sizes[1]
  size.fleet = {
    pollSeconds: 5,
    snapshotBytes: 69_100_000,
    changeBytes: 1_400_000,
    publishMs: 812,
    servedAfterMs: [2310, null],
    viaNginx: { countBefore: 50_001, countsAfter: [49_950] },
    downloadedAtStart: [{ 'snap.jsonl': 69_100_000 }, { 'snap.jsonl': 69_100_000 }],
    downloaded: [{ 'chg-0001.jsonl': 1_400_000 }, { 'chg-0001.jsonl': 1_000_000, 'other.jsonl': 400_000 }],
    rssBytes: [2e8, 2.1e8]
  }
  let table = renderTable(results)
  t.match(table, '| Fleet join (2 replicas at once, S3): first answer, each; from the image, snapshot kept after | not run | not measured |', 'results from before the join')
  Object.assign(size.fleet, { joinMs: [1000, 3000], keptMs: [9000, null] })
  table = renderTable(results)
  t.match(table, '| Fleet join (2 replicas at once, S3): first answer, each; from the image, snapshot kept after | not run | 1.00 s, 3.00 s; 9.00 s, n/a |')
  t.match(table, '| Fleet (2 replicas, nginx, S3): a change served by each after (poll) | not run | 2.31 s, n/a (5 s) |')
  t.match(table, '| Fleet: bytes each replica downloaded for it (change file; snapshot) | not run | 1,400,000, 1,400,000 (1,400,000; 69,100,000) |', 'each replica\'s objects summed')
  const text = markdown(results as BenchResult)
  t.match(text, '### A change published to a fleet (--fleet)')
  t.match(text, 'served by the two replicas 2.31 s, **never** after (goal: within the 5 s poll + 1 s)')
  t.match(text, 'downloaded for it: chg-0001.jsonl 1,400,000 B; chg-0001.jsonl 1,000,000 B, other.jsonl 400,000 B')

  size.fleet = 'nginx is not installed (Debian: apt-get install nginx)'
  t.match(renderTable(results), '| Fleet (2 replicas, nginx, S3): a change served by each after (poll) | not run | not run: nginx is not installed (Debian: apt-get install nginx) |')
  t.match(markdown(results as BenchResult), '- 50k: not run: nginx is not installed')
  size.fleet = { pollSeconds: 5 }
  t.throws(() => renderTable(results), new ResultsShapeError('results.sizes[1].fleet.servedAfterMs: an array expected, found missing'))
  t.notMatch(renderTable(fixture()), 'Fleet', 'no fleet rows when it was not asked for')
})

t.test('the memory goal\'s settled reading: each file\'s rise over the reading before it, and its multiple of the file', async t => {
  t.equal(settledRises({ fileBytes: [1_380_000, 1_380_000], beforeBytes: 1_559_400_000, afterBytes: [1_559_300_000, 1_561_200_000] }),
    '−0.1 MB (−0.1×), +1.9 MB (+1.4×)')
})

t.test('from three files on, the settled reading adds the rise per file by least squares, by which the goal is judged', async t => {
  t.equal(settledRises({ fileBytes: [1_400_000, 1_400_000, 1_400_000], beforeBytes: 1_000_000_000, afterBytes: [1_000_000_000, 1_005_000_000, 1_006_000_000] }),
    '+0.0 MB (+0.0×), +5.0 MB (+3.6×), +1.0 MB (+0.7×); by slope +3.0 MB a file (+2.1×)')
  t.equal(settledRises({ fileBytes: [1e6, 1e6, 1e6, 1e6], beforeBytes: 5e8, afterBytes: [5e8, 4.99e8, 4.98e8, 4.97e8] }).split('; ')[1], 'by slope −1.0 MB a file (−1.0×)', 'a fall reads as one')
})
