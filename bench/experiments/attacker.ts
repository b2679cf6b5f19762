// The hostile client of hostile-traffic.ts, in a process of its own: sends one request pattern at a fixed rate
// (open loop: a request leaves on time whether or not the last one was answered) or as fast as one connection
// goes, and prints what came back as one JSON line. Run by plain node (plain-script.ts): node: modules only.
// Usage: node attacker.mjs PORT PATTERN RATE COUNT COMPANIES.json   (RATE 0: one connection, back to back)
import { Agent, request } from 'node:http'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

interface Shape {
  path: string
  headers: Record<string, string>
}

const EXPLORE = '/en/api/internal/explore/'

/** Letters from a xorshift stream: every request's junk differs, and every run's is the same. */
function junk (seed: number, length: number): string {
  let x = (seed * 2654435761) >>> 0 || 1
  const out = new Array<string>(length)
  for (let i = 0; i < length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0
    out[i] = String.fromCharCode(97 + x % 26)
  }
  return out.join('')
}

/**
 * Each pattern: request i. CPU patterns are sent at a rate beside an honest client; memory patterns as fast
 * as one connection goes, every request distinct, so that nothing a request leaves behind is shared.
 */
export const PATTERNS: Record<string, (i: number, companies: readonly number[]) => Shape> = {
  /** The honest reference: distinct ordinary pages. */
  ordinary: (i, companies) => ({
    path: `${EXPLORE}?companies=${companies[i % companies.length] as number}&limit=${5 + i % 31}&offset=${Math.floor(i / companies.length) % 40}`,
    headers: { accept: 'application/json' }
  }),
  /** A quote left open, then `;""` 5,000 times: 15 KB that a quadratic media type parser chews on. */
  'accept-quotes': () => ({ path: `${EXPLORE}?companies=3`, headers: { accept: `"${';""'.repeat(5000)}` } }),
  /** 15 KB of junk after a type that still matches: a 200 whose key is the whole header. */
  'accept-junk': i => ({ path: `${EXPLORE}?companies=3`, headers: { accept: `application/json,${junk(i, 15_000)}` } }),
  /** A junk query field near the URL limit (8 KB): a 200 whose key is the whole URL. */
  'query-junk': i => ({ path: `${EXPLORE}?companies=3&q=${junk(i, 7_900)}`, headers: {} }),
  /** 559 companies that exist and one that does not, a new one each time: a union per request. */
  unions: (i, companies) => ({
    path: `${EXPLORE}?${[...companies.slice(0, 559), 1_000_000_000 + i].map(id => `companies=${id}`).join('&')}`,
    headers: {}
  }),
  /** Django's most query fields, 1,000, every name new. */
  'fields-1000': i => ({ path: `${EXPLORE}?${Array.from({ length: 1000 }, (_, k) => `f${i}x${k}=1`).join('&').slice(0, 8000)}`, headers: {} }),
  /** 15 KB of entity tags to compare. */
  'if-none-match': i => ({
    path: `${EXPLORE}?companies=3`,
    headers: { 'if-none-match': Array.from({ length: 600 }, (_, k) => `"${junk(i * 1000 + k, 20)}"`).join(', ') }
  }),
  /** A path of 2,600 percent-encoded letters: the router's and APPEND_SLASH's work. */
  'encoded-path': i => ({ path: `/${'%41'.repeat(2600)}${i}`, headers: {} }),
  /** 400 small headers, every name new. */
  'many-headers': i => ({
    path: `${EXPLORE}?companies=3`,
    headers: Object.fromEntries(Array.from({ length: 400 }, (_, k) => [`x-h${i}-${k}`, 'v']))
  }),
  /** A proxy that appends: the client's host first. */
  'forwarded-host': i => ({ path: `${EXPLORE}?companies=3`, headers: { 'x-forwarded-host': `evil${i}.example, ${'a.example, '.repeat(1300)}news.example.com` } })
}

interface Tally {
  sent: number
  answered: number
  failed: number
  statuses: Record<string, number>
  /** Answer latencies, ms. */
  latencies: number[]
}

async function send (agent: Agent, port: number, shape: Shape, tally: Tally): Promise<void> {
  tally.sent++
  const started = performance.now()
  await new Promise<void>(resolve => {
    const req = request({ host: '127.0.0.1', port, path: shape.path, headers: shape.headers, agent }, res => {
      res.resume()
      res.on('end', () => {
        tally.answered++
        tally.statuses[String(res.statusCode)] = (tally.statuses[String(res.statusCode)] ?? 0) + 1
        tally.latencies.push(performance.now() - started)
        resolve()
      })
    })
    req.on('error', () => { tally.failed++; resolve() })
    req.end()
  })
}

async function main (): Promise<void> {
  const [port, pattern, rate, count, companiesFile] = process.argv.slice(2)
  const make = pattern === undefined ? undefined : PATTERNS[pattern]
  if (port === undefined || make === undefined || rate === undefined || count === undefined || companiesFile === undefined) {
    console.error(`usage: node attacker.mjs PORT PATTERN RATE COUNT COMPANIES.json; patterns: ${Object.keys(PATTERNS).join(', ')}`)
    process.exit(2)
  }
  const companies = JSON.parse(readFileSync(companiesFile, 'utf8')) as number[]
  const tally: Tally = { sent: 0, answered: 0, failed: 0, statuses: {}, latencies: [] }
  const total = Number(count)
  const perSecond = Number(rate)
  if (perSecond === 0) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    for (let i = 0; i < total; i++) await send(agent, Number(port), make(i, companies), tally)
    agent.destroy()
  } else {
    // Open loop: the next request leaves on the clock, up to 64 sockets in flight.
    const agent = new Agent({ keepAlive: true, maxSockets: 64 })
    const started = performance.now()
    const pending: Array<Promise<void>> = []
    for (let i = 0; i < total; i++) {
      const due = started + i * 1000 / perSecond
      const wait = due - performance.now()
      if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait))
      pending.push(send(agent, Number(port), make(i, companies), tally))
    }
    await Promise.all(pending)
    agent.destroy()
  }
  const sorted = tally.latencies.sort((a, b) => a - b)
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
  console.log(JSON.stringify({
    pattern,
    sent: tally.sent,
    answered: tally.answered,
    failed: tally.failed,
    statuses: tally.statuses,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: sorted[sorted.length - 1] ?? 0
  }))
}

// Imported by hostile-traffic.ts for the patterns' names: run only as a script.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
