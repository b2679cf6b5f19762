// Whether each trick of src/snapshot/memory-policy.ts still pays on this Node: the same snapshot loaded and
// reloaded twice (bench/memory-policy-probe.ts) with every trick on, then with each turned off in turn, one
// process each, one after the other. `npm run bench` runs it at sizes of 1M items and more; alone:
//   npx tsx bench/memory-policy.ts SNAPSHOT
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ProbeResult } from './memory-policy-probe.js'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
const PROBE = join(ROOT, 'bench', 'memory-policy-probe.ts')
type Ratios = { peakRss: number, settledRss: number, reloadMs: number, reloadMajorGcs: number, reloadLoopMax: number }
/**
 * Each trick and the figure it is there for: it pays when turning it off makes that figure worse. The
 * lower priority of the parse threads shows only beside requests (the bench's reload-under-load workload):
 * here, with no request, its figure is the loop's own longest delay.
 */
const TRICKS: Array<{ trick: string, for: keyof Ratios }> = [
  { trick: 'sharedItemMemory', for: 'reloadMajorGcs' },
  { trick: 'collectionHint', for: 'settledRss' },
  { trick: 'lowPriorityParseThreads', for: 'reloadLoopMax' },
  { trick: 'reusedBatchMemory', for: 'settledRss' },
  { trick: 'restingParseThreads', for: 'settledRss' }
]

export interface PolicyResult {
  file: string
  /** Every trick on. */
  all: ProbeResult
  /** Each trick off, with what turning it off changed (ratios to all on; above 1: worse without it). */
  without: Array<ProbeResult & { trick: string, for: keyof Ratios, vsAll: Ratios, pays: boolean }>
}

function probe (file: string, off?: string): ProbeResult {
  const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', PROBE, file, ...(off === undefined ? [] : [off])], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 })
  if (run.status !== 0) throw new Error(`the probe${off === undefined ? '' : ` without ${off}`} failed (${run.status}): ${run.stderr.slice(-2000)}`)
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as ProbeResult
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0)
/** Turning a trick off costs this much more (5%) before it is said to pay: the scatter of one run. */
const PAYS = 1.05

export function runMemoryPolicy (file: string, log: (line: string) => void = line => console.error(line)): PolicyResult {
  log(`memory policy: ${file}, every trick on`)
  const all = probe(file)
  const without = TRICKS.map(({ trick, for: figure }) => {
    log(`memory policy: ${file}, without ${trick}`)
    const result = probe(file, trick)
    const vsAll: Ratios = {
      peakRss: result.peakRssBytes / all.peakRssBytes,
      settledRss: result.settledRssBytes / all.settledRssBytes,
      reloadMs: sum(result.reloadMs) / sum(all.reloadMs),
      reloadMajorGcs: (result.reloadMajorGcs + 1) / (all.reloadMajorGcs + 1),
      reloadLoopMax: result.reloadLoopMaxMs / all.reloadLoopMaxMs
    }
    return { ...result, trick, for: figure, vsAll, pays: vsAll[figure] > PAYS }
  })
  return { file, all, without }
}

/** The result as a Markdown table, for the bench's report. */
export function policyTable ({ all, without }: PolicyResult): string {
  const mb = (bytes: number) => (bytes / 1e6).toFixed(0)
  const row = (name: string, r: ProbeResult, pays = '') =>
    `| ${name} | ${mb(r.peakRssBytes)} | ${mb(r.settledRssBytes)} | ${r.reloadMs.map(ms => (ms / 1000).toFixed(1)).join(', ')} | ${r.reloadMajorGcs} | ${r.reloadGcPauseMs.toFixed(0)} | ${r.reloadLoopMaxMs.toFixed(1)} | ${pays} |`
  return [
    '| Memory policy | Peak RSS MB | Settled RSS MB | Reloads s | Major GCs in reloads | GC pause ms | Loop max ms | Pays? |',
    '|---|--:|--:|--:|--:|--:|--:|---|',
    row('every trick on', all),
    ...without.map(r => row(`without ${r.trick}`, r, `${r.pays ? 'yes' : 'not measurably here'} (${r.for} ×${r.vsAll[r.for].toFixed(2)} without it)`))
  ].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2]
  if (file === undefined) {
    console.error('usage: npx tsx bench/memory-policy.ts SNAPSHOT')
    process.exit(2)
  }
  const result = runMemoryPolicy(file)
  console.log(policyTable(result))
  console.log(JSON.stringify(result))
}
