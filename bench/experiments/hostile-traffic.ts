// Hostile traffic beside an honest client (issue 56's goals): each request pattern of attacker.ts at a fixed rate
// while wrk asks for hot pages, against the same load with no attacker just before it; then each memory pattern,
// 10,000 requests as fast as one connection sends them, in a fresh service, against the same count of ordinary
// distinct pages. Reported: the honest client's p99 quiet and attacked, errors, what the attacker got back, and
// the service's RSS (right after, and settled: after a full collection).
// Usage: npx tsx bench/experiments/hostile-traffic.ts [--items 50000] [--seconds 20] [--rate 50] [--count 10000]
//        [--cpu PATTERN,…] [--memory PATTERN,…] [--checkout DIR] [--service-args "…"]
// Builds nothing: DIR (default .) must have dist/ (`npm run build`). Needs wrk (Debian's `wrk`).
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { forceGc } from '../force-gc.js'
import { sample, summarize, warmUp, wrkVersion, type LoadSettings } from '../load-test.js'
import { plainScript } from '../plain-script.js'
import { childEnv, freePort, memoryOf, startChild, stopAll, stopChild, waitUntilAnswering, type Child } from '../processes.js'
import { ensureSnapshot } from '../snapshots.js'
import { hotWorkload } from '../workloads.js'
import { PATTERNS } from './attacker.js'

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))))
const DATA_DIR = join(ROOT, 'bench', '.data')
const MB = 1024 * 1024

const CPU_PATTERNS = ['accept-quotes', 'accept-junk', 'query-junk', 'unions', 'fields-1000', 'if-none-match', 'encoded-path', 'many-headers', 'forwarded-host']
const MEMORY_PATTERNS = ['accept-junk', 'query-junk', 'unions', 'fields-1000', 'if-none-match', 'many-headers']

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '50000' },
    seconds: { type: 'string', default: '20' },
    rate: { type: 'string', default: '50' },
    count: { type: 'string', default: '10000' },
    cpu: { type: 'string', default: CPU_PATTERNS.join(',') },
    memory: { type: 'string', default: MEMORY_PATTERNS.join(',') },
    checkout: { type: 'string', default: '.' },
    'service-args': { type: 'string', default: '' }
  }
})
const items = Number(values.items)
const seconds = Number(values.seconds)
const rate = Number(values.rate)
const count = Number(values.count)
const checkout = resolve(values.checkout)
const serviceArgs = values['service-args'].split(' ').filter(arg => arg !== '')
const cpuPatterns = values.cpu.split(',').filter(name => name !== '')
const memoryPatterns = values.memory.split(',').filter(name => name !== '')
for (const name of [...cpuPatterns, ...memoryPatterns]) {
  if (PATTERNS[name] === undefined) throw new RangeError(`no pattern ${name}; patterns: ${Object.keys(PATTERNS).join(', ')}`)
}
if (!existsSync(join(checkout, 'dist', 'server.js'))) throw new Error(`${checkout} has no dist/server.js: run npm run build there`)
if (wrkVersion() === null) throw new Error('wrk is not installed (Debian: apt-get install wrk)')

await mkdir(DATA_DIR, { recursive: true })
const info = await ensureSnapshot(ROOT, DATA_DIR, items, 1, 'json')
const byItems = [...info.companies].sort((a, b) => (b.items.en ?? 0) - (a.items.en ?? 0))
const companiesFile = join(DATA_DIR, `hostile-companies-${info.key}.json`)
await writeFile(companiesFile, JSON.stringify(byItems.filter(c => (c.items.en ?? 0) > 0).map(c => c.id)))
const attacker = await plainScript(join(ROOT, 'bench', 'experiments', 'attacker.ts'), DATA_DIR)
const hot = hotWorkload(info.items, info.companies, 2000, 1)
const settings: LoadSettings = { client: 'wrk', connections: 32, warmupSeconds: 3, durationSeconds: seconds }
const work = await mkdtemp(join(tmpdir(), 'explore-hostile-'))

interface AttackerResult {
  sent: number
  answered: number
  failed: number
  statuses: Record<string, number>
  p50Ms: number
  p99Ms: number
  maxMs: number
}

async function attack (port: number, pattern: string, perSecond: number, total: number): Promise<AttackerResult> {
  return await new Promise((resolve, reject) => {
    execFile(process.execPath, [attacker, String(port), pattern, String(perSecond), String(total), companiesFile], { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`attacker ${pattern}: ${stderr.trim() || error.message}`))
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1) as string) as AttackerResult)
    })
  })
}

async function startService (): Promise<{ child: Child, port: number }> {
  const port = await freePort()
  const state = await mkdtemp(join(work, 'state-'))
  const child = startChild('service', [join(checkout, 'dist', 'server.js'), info.file, '--port', String(port), '--log-level', 'warn', '--watch', 'false', ...serviceArgs], {
    cwd: checkout,
    env: { ...childEnv(), STATE_DIR: state, WORKERS: '1' }
  })
  await waitUntilAnswering(child, `http://127.0.0.1:${port}/-/readyz`, 120_000)
  return { child, port }
}

const statuses = (s: Record<string, number>): string => Object.entries(s).map(([code, n]) => `${n}×${code}`).join(' ')
const ms = (value: number): string => `${value.toFixed(1)} ms`

try {
  console.log(`# Hostile traffic: ${info.label} (${info.totalItems.toLocaleString('en-US')} items), ${checkout}, Node ${process.version}`)
  if (cpuPatterns.length > 0) {
    console.log(`\n## CPU: each pattern at ${rate} req/s for ${seconds} s beside wrk (hot pages, 32 connections); the quiet run just before it\n`)
    console.log('| Pattern | Honest p99 quiet → attacked (goal ≤ 2× + 5 ms) | Honest req/s quiet → attacked | Honest errors | Attacker got | Attacker p50 / p99 |')
    console.log('|---|--:|--:|--:|---|--:|')
    const { child, port } = await startService()
    await warmUp(port, hot.warmup, settings)
    for (const pattern of cpuPatterns) {
      const quiet = summarize([await sample(port, child.pid, hot.measured, settings)])
      const [attacked, hostile] = await Promise.all([
        sample(port, child.pid, hot.measured, settings).then(s => summarize([s])),
        attack(port, pattern, rate, rate * seconds)
      ])
      const held = attacked.p99Ms <= 2 * quiet.p99Ms + 5 ? '' : ' **over**'
      console.log(`| ${pattern} | ${ms(quiet.p99Ms)} → ${ms(attacked.p99Ms)}${held} | ${Math.round(quiet.requestsPerSecond)} → ${Math.round(attacked.requestsPerSecond)} | ${attacked.errors + attacked.timeouts} | ${statuses(hostile.statuses)}${hostile.failed > 0 ? `, ${hostile.failed} failed` : ''} | ${ms(hostile.p50Ms)} / ${ms(hostile.p99Ms)} |`)
    }
    await stopChild(child)
  }
  if (memoryPatterns.length > 0) {
    console.log(`\n## Memory: ${count.toLocaleString('en-US')} requests as fast as one connection sends them, each in a fresh service\n`)
    console.log('| Pattern | Answers | RSS after | Settled RSS | Settled − ordinary (goal ≤ +32 MB) |')
    console.log('|---|---|--:|--:|--:|')
    const rows: Array<{ pattern: string, got: string, rss: number, settled: number }> = []
    // Ordinary pages first and last: the reference is their median, and their spread is the noise.
    for (const pattern of ['ordinary', ...memoryPatterns, 'ordinary']) {
      const { child, port } = await startService()
      const hostile = await attack(port, pattern, 0, count)
      const rss = (await memoryOf(child.pid)).rssBytes
      const settled = await forceGc(child.pid) ? (await memoryOf(child.pid)).rssBytes : NaN
      rows.push({ pattern, got: statuses(hostile.statuses) + (hostile.failed > 0 ? `, ${hostile.failed} failed` : ''), rss, settled })
      await stopChild(child)
    }
    const ordinary = rows.filter(row => row.pattern === 'ordinary').map(row => row.settled)
    const reference = Math.max(...ordinary)
    for (const row of rows) {
      const rise = (row.settled - reference) / MB
      const over = row.pattern !== 'ordinary' && rise > 32 ? ' **over**' : ''
      console.log(`| ${row.pattern} | ${row.got} | ${Math.round(row.rss / MB)} MB | ${Math.round(row.settled / MB)} MB | ${row.pattern === 'ordinary' ? '(reference: the larger)' : `${rise >= 0 ? '+' : ''}${rise.toFixed(1)} MB${over}`} |`)
    }
  }
} finally {
  await stopAll()
  await rm(work, { recursive: true, force: true })
}
