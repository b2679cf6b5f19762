// The CPU a server spends on each shape of request, hostile ones included, against an ordinary page and a page of the
// largest limit (issue 56, ADR 037): named shapes, then a fast-check search over header and query shapes for the worst.
// `npx tsx bench/experiments/request-costs.ts [SERVER_ENTRY] [--items N] [--candidates N] [--chaos]`: the built
// server (dist/server.js) by default, WORKERS=1, on the bench's generated snapshot of N items (50,000). Linux only.
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import fc from 'fast-check'
import { freePort, memoryOf, startService, stopAll, waitUntilAnswering } from '../processes.js'
import { ensureSnapshot } from '../snapshots.js'

const root = resolve(import.meta.dirname, '../..')
const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    items: { type: 'string', default: '50000' },
    candidates: { type: 'string', default: '300' },
    chaos: { type: 'boolean', default: false }
  }
})
const entry = resolve(positionals[0] ?? join(root, 'dist/server.js'))
const EXPLORE = '/en/api/internal/explore/'
/** Node's maxHeaderSize is 16 KiB for the request line and every header: what a hostile header can fill. */
const HEADER_ROOM = 15_000
/** MAX_URL_LENGTH's default: a longer target is a 414. */
const TARGET_ROOM = 8_000
const MAX_LIMIT = 100

await mkdir(join(root, 'bench/.data'), { recursive: true })
const info = await ensureSnapshot(root, join(root, 'bench/.data'), Number(options.items), 1, 'json')
const companies = info.companies.filter(c => (c.items.en ?? 0) > 0).sort((a, b) => (b.items.en ?? 0) - (a.items.en ?? 0))
const enItems = info.items.en ?? 0
const stateDir = await mkdtemp(join(tmpdir(), 'request-costs-'))
const port = await freePort()
const server = startService(entry, { snapshot: info.file, port, stateDir, env: options.chaos ? { CHAOS: 'true' } : {} })

/** Nanoseconds each thread of the server has run (schedstat: no clock-tick rounding), by thread id. */
async function serverCpuNs (): Promise<Map<string, number>> {
  const byThread = new Map<string, number>()
  for (const task of await readdir(`/proc/${server.pid}/task`)) {
    try {
      byThread.set(task, Number((await readFile(`/proc/${server.pid}/task/${task}/schedstat`, 'utf8')).split(' ')[0]))
    } catch {} // a thread that ended meanwhile
  }
  return byThread
}

/** What the threads ran between two readings: a thread that ended between them (an idle parse thread) ran ~0. */
function ranBetween (before: Map<string, number>, after: Map<string, number>): number {
  let ns = 0
  for (const [task, now] of after) ns += now - (before.get(task) ?? 0)
  return ns
}

interface Shape {
  name: string
  /** The n-th request of the shape; varied where a page must not come from the cache. */
  make: (n: number) => { method?: string, path: string, headers?: Record<string, string> }
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 })

async function send ({ method = 'GET', path, headers = {} }: ReturnType<Shape['make']>): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers }, agent }, res => {
      res.resume()
      res.on('end', () => resolve(res.statusCode as number))
    })
    req.on('error', reject)
    req.end()
  })
}

/** µs of server CPU per request, over `count` requests four at a time (fewer past 3 s), after `warm` unmeasured ones. */
async function cost (shape: Shape, count: number, warm = Math.min(50, count)): Promise<{ us: number, status: number }> {
  let next = 0
  let until = Infinity
  const run = async (total: number): Promise<number> => {
    let status = 0
    const one = async (): Promise<void> => {
      while (next < total && performance.now() < until) status = await send(shape.make(next++))
    }
    await Promise.all([one(), one(), one(), one()])
    return status
  }
  await run(warm)
  next = warm
  const before = await serverCpuNs()
  until = performance.now() + 3000
  const status = await run(warm + count)
  return { us: ranBetween(before, await serverCpuNs()) / 1000 / (next - warm), status }
}

const company = (rank: number): number => (companies[rank % companies.length] as { id: number }).id
const unique = (n: number): string => n.toString(36).padStart(6, '0')
const fill = (unit: string, room: number): string => unit.repeat(Math.max(1, Math.floor(room / unit.length)))
const ids = (count: number, from = 0): string => Array.from({ length: count }, (_, i) => `companies=${company(from + i)}`).join('&')

const ORDINARY: Shape = { name: 'ordinary page (one company, limit 10, not cached)', make: n => ({ path: `${EXPLORE}?companies=${company(n % 20)}&limit=10&offset=${(n * 10) % 200}&n=${n}` }) }
const LARGEST: Shape = { name: `page of the largest limit (${MAX_LIMIT}, not cached)`, make: n => ({ path: `${EXPLORE}?limit=${MAX_LIMIT}&offset=${(n * MAX_LIMIT) % Math.max(1, enItems - MAX_LIMIT)}&n=${n}` }) }

const shapes: Shape[] = [
  { name: 'the same page again (kept)', make: () => ({ path: `${EXPLORE}?companies=${company(0)}&limit=10` }) },
  { name: 'Accept: " then ;"" (406)', make: () => ({ path: EXPLORE, headers: { accept: `"${fill(';""', HEADER_ROOM)}` } }) },
  { name: 'Accept: commas (406)', make: () => ({ path: EXPLORE, headers: { accept: fill(',', HEADER_ROOM) } }) },
  { name: 'Accept: type; then a=b params (200)', make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { accept: `application/json${fill(';a=b', HEADER_ROOM)}` } }) },
  { name: 'Accept: a/b;x=" then semicolons (406)', make: () => ({ path: EXPLORE, headers: { accept: `a/b;x="${fill(';', HEADER_ROOM)}` } }) },
  { name: 'Accept: application/json, then junk, new each time (200)', make: n => ({ path: EXPLORE, headers: { accept: `application/json,${unique(n)}${fill('x', HEADER_ROOM)}` } }) },
  { name: 'Accept: indent= long digits (200, compact)', make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { accept: `application/json; indent=${fill('\u00b9', HEADER_ROOM)}` } }) },
  { name: 'OPTIONS with Accept " then ;""', make: () => ({ method: 'OPTIONS', path: EXPLORE, headers: { accept: `"${fill(';""', HEADER_ROOM)}` } }) },
  { name: 'POST with Accept " then ;"" (405)', make: () => ({ method: 'POST', path: EXPLORE, headers: { accept: `"${fill(';""', HEADER_ROOM)}` } }) },
  { name: 'If-None-Match: commas (200)', make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { 'if-none-match': fill(',', HEADER_ROOM) } }) },
  { name: 'If-None-Match: W/ tags (200)', make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { 'if-none-match': fill('W/"x", ', HEADER_ROOM) } }) },
  { name: 'Origin: 15 KB', make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { origin: fill('o', HEADER_ROOM) } }) },
  { name: 'Host: a 15 KB name', make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { host: fill('h', HEADER_ROOM) } }) },
  { name: 'Host: a 15 KB bad one (400)', make: () => ({ path: EXPLORE, headers: { host: `[${fill('a:', HEADER_ROOM)}` } }) },
  { name: 'query: one junk field, new each time', make: n => ({ path: `${EXPLORE}?x${unique(n)}=${fill('j', TARGET_ROOM)}` }) },
  { name: 'query: 1,000 fields (400)', make: () => ({ path: `${EXPLORE}?${fill('a=1&', 4004)}` }) },
  { name: 'query: 999 fields', make: n => ({ path: `${EXPLORE}?n=${n}&${fill('a=1&', 3992)}` }) },
  { name: 'query: 999 distinct keys', make: n => ({ path: `${EXPLORE}?n=${n}&${Array.from({ length: 998 }, (_, i) => `${i.toString(36)}=1`).join('&')}` }) },
  { name: 'query: %E9%41 (broken UTF-8 between ASCII)', make: n => ({ path: `${EXPLORE}?n=${n}&x=${fill('%E9%41', TARGET_ROOM)}` }) },
  { name: 'query: %C3%A9 escapes', make: n => ({ path: `${EXPLORE}?n=${n}&x=${fill('%C3%A9', TARGET_ROOM)}` }) },
  { name: 'query: % soup', make: n => ({ path: `${EXPLORE}?n=${n}&x=${fill('%', TARGET_ROOM)}` }) },
  { name: 'query: + soup', make: n => ({ path: `${EXPLORE}?n=${n}&x=${fill('+', TARGET_ROOM)}` }) },
  { name: 'query: é keys (links sort and re-encode them)', make: n => ({ path: `${EXPLORE}?offset=10&n=${n}&${Array.from({ length: 500 }, (_, i) => `%C3%A9${i.toString(36)}=%C3%A9`).join('&')}` }) },
  { name: 'limit: Arabic-Indic digits', make: n => ({ path: `${EXPLORE}?n=${n}&limit=${fill('%D9%A5', TARGET_ROOM)}` }) },
  { name: 'offset: 1_ repeated', make: n => ({ path: `${EXPLORE}?n=${n}&offset=${fill('1_', TARGET_ROOM)}` }) },
  { name: 'companies: long zero-padded ids', make: n => ({ path: `${EXPLORE}?n=${n}&companies=${fill('0', TARGET_ROOM / 2)}${company(n)}` }) },
  { name: 'companies: 559 known + one unknown, new set each time', make: n => ({ path: `${EXPLORE}?${ids(559, n)}&companies=${9_000_000 + n}` }) },
  { name: 'companies: the 559 largest, a new unknown each time', make: n => ({ path: `${EXPLORE}?${ids(559)}&companies=${9_000_000 + n}` }) },
  { name: 'companies: 440 unknown', make: n => ({ path: `${EXPLORE}?${Array.from({ length: 440 }, (_, i) => `companies=${8_000_000 + ((n * 440 + i) % 1_000_000)}`).join('&')}` }) },
  { name: 'companies: two, each time another pair', make: n => ({ path: `${EXPLORE}?companies=${company(n)}&companies=${company(n + 1)}&offset=${n % 50}` }) },
  { name: 'path: escaped (%65xplore)', make: n => ({ path: `/en/api/internal/%65xplore/?n=${n}` }) },
  { name: 'path: absolute form', make: n => ({ path: `http://127.0.0.1${EXPLORE}?n=${n}` }) },
  { name: 'path: without its slash, long query (301)', make: n => ({ path: `/en/api/internal/explore?n=${n}&x=${fill('j', TARGET_ROOM)}` }) },
  { name: 'path: unknown, long (404)', make: n => ({ path: `/${unique(n)}${fill('p', TARGET_ROOM)}` }) },
  { name: 'path: %-escapes everywhere (404)', make: n => ({ path: `/${unique(n)}${fill('%41', TARGET_ROOM)}` }) },
  ...(options.chaos
    ? [
        { name: 'Prefer: commas (CHAOS)', make: (n: number) => ({ path: `${EXPLORE}?n=${n}`, headers: { prefer: fill(',', HEADER_ROOM) } }) },
        { name: 'Prefer: delay=0; x (CHAOS)', make: (n: number) => ({ path: `${EXPLORE}?n=${n}`, headers: { prefer: fill('delay=0;a=b,', HEADER_ROOM) } }) },
        { name: 'query: 980 __x fields (CHAOS)', make: (n: number) => ({ path: `${EXPLORE}?n=${n}&${fill('__x=1&', 5880)}` }) }
      ]
    : [])
]

// Characters every parser treats apart, and a few ordinary ones.
const TRICKY = ['"', ';', ',', '=', '\\', ' ', '\t', '%', '%4', '%E9', '\u00e9', '+', '&', '_', '/', '*', 'W/', 'q', 'a', '1', '0', '_1', 'indent']
const PREFIXES = ['', 'application/json', 'application/json;', '*/*;', '"', 'a=', 'companies=', 'limit=', 'offset=', 'format=']

/** A header or the query filled with one repeated unit of tricky characters: the shapes a parser may walk badly. */
const searched: fc.Arbitrary<Searched> = fc.record({
  where: fc.constantFrom('accept', 'if-none-match', 'origin', 'query', ...(options.chaos ? ['prefer'] : [])),
  prefix: fc.constantFrom(...PREFIXES),
  unit: fc.array(fc.constantFrom(...TRICKY), { minLength: 1, maxLength: 5 }).map(parts => parts.join('')),
  tail: fc.constantFrom('', '"', ';', 'x', ',application/json')
})

interface Searched { where: string, prefix: string, unit: string, tail: string }

function searchedShape ({ where, prefix, unit, tail }: Searched): Shape {
  const label = `${where}: ${JSON.stringify(prefix)} + ${JSON.stringify(unit)}… + ${JSON.stringify(tail)}`
  if (where === 'query') {
    // Raw: only what a request line may hold (no space, no #); the unit otherwise as it is.
    const text = `${prefix}${fill(unit.replace(/[ \t#]/g, '+'), TARGET_ROOM - 100)}${tail}`.replace(/[ \t#]/g, '+')
    return { name: label, make: n => ({ path: `${EXPLORE}?n=${n}&${text}` }) }
  }
  const value = `${prefix}${fill(unit, HEADER_ROOM - 200)}${tail}`.trim()
  return { name: label, make: n => ({ path: `${EXPLORE}?n=${n}`, headers: { [where]: value } }) }
}

try {
  await waitUntilAnswering(server, `http://127.0.0.1:${port}/-/readyz`, 120_000)
  console.log(`${entry}, Node ${process.version}, WORKERS=1, ${info.totalItems.toLocaleString('en-US')} items (${enItems.toLocaleString('en-US')} en, ${companies.length} companies)${options.chaos ? ', CHAOS' : ''}`)
  // Warm first: the pages' code runs optimized before anything is measured.
  await cost(ORDINARY, 3000, 1000)
  const first = { ordinary: (await cost(ORDINARY, 2000, 300)).us, largest: (await cost(LARGEST, 1000, 100)).us }
  const results: Array<{ name: string, us: number, status: number }> = []
  for (const shape of shapes) {
    results.push({ name: shape.name, ...await cost(shape, 300, 30) })
    process.stdout.write('.')
  }
  const candidates = fc.sample(searched, { numRuns: Number(options.candidates), seed: 56 })
  const found: Array<{ shape: Shape, us: number }> = []
  for (const candidate of candidates) {
    const shape = searchedShape(candidate)
    found.push({ shape, us: (await cost(shape, 20, 3)).us })
    if (found.length % 10 === 0) process.stdout.write(':')
  }
  found.sort((a, b) => b.us - a.us)
  const searchedFrom = results.length
  for (const { shape } of found.slice(0, 5)) results.push({ name: shape.name, ...await cost(shape, 300, 30) })
  // Again at the end, the process as warm as it gets: each figure is the two readings' mean.
  const ordinary = ((await cost(ORDINARY, 2000, 300)).us + first.ordinary) / 2
  const largest = ((await cost(LARGEST, 1000, 100)).us + first.largest) / 2
  const { rssBytes } = await memoryOf(server.pid)

  const line = (name: string, us: number, status: number | string): string =>
    `${name.padEnd(64)} ${String(status).padStart(4)} ${us.toFixed(1).padStart(9)} µs ${(us / ordinary).toFixed(2).padStart(7)}× ${(us / largest).toFixed(2).padStart(6)}×`
  console.log(`\n${'shape'.padEnd(64)} ${'code'.padStart(4)} ${'CPU/request'.padStart(12)} ${'ordinary'.padStart(8)} ${'limit ' + MAX_LIMIT}`)
  console.log(line(ORDINARY.name, ordinary, 200))
  console.log(line(LARGEST.name, largest, 200))
  results.slice(0, searchedFrom).forEach(r => console.log(line(r.name, r.us, r.status)))
  console.log(`search: ${candidates.length} header and query shapes (fast-check, seed 56), 20 requests each; the worst five again:`)
  results.slice(searchedFrom).forEach(r => console.log(line(r.name, r.us, r.status)))
  const worst = [...results].sort((a, b) => b.us - a.us)[0]
  if (worst !== undefined) {
    console.log(`\nworst: ${worst.name}: ${worst.us.toFixed(1)} µs = ${(worst.us / ordinary).toFixed(2)}× an ordinary page, ${(worst.us / largest).toFixed(2)}× a page of limit ${MAX_LIMIT} (goal: < 1,000 µs)`)
  }
  console.log(`server RSS at the end: ${(rssBytes / 2 ** 20).toFixed(0)} MiB`)
} finally {
  agent.destroy()
  await stopAll()
  await rm(stateDir, { recursive: true, force: true })
}
