// One measured run of the bench's own client and workload against a server already listening: the
// figure to compare servers side by side, one at a time, without the full `npm run bench`.
// Usage: npx tsx bench/experiments/load-once.ts SNAPSHOT.meta.json PORT PID hot|cold [SECONDS]
// wrk where installed, else autocannon. LOAD_CONNECTIONS=n sets the client's connections (default 32, the bench's): fewer connections, a lighter
// but steady load (each connection sends its next request when the answer arrives).
// (the meta file is written beside each snapshot in bench/.data/ by `npm run bench`).
import { readFileSync } from 'node:fs'
import { sample, warmUp, wrkVersion } from '../load-test.js'
import { coldWorkload, hotWorkload } from '../workloads.js'

const [meta, port, pid, which = 'cold', seconds = '5'] = process.argv.slice(2)
if (meta === undefined || port === undefined || pid === undefined) {
  console.error('usage: npx tsx bench/experiments/load-once.ts SNAPSHOT.meta.json PORT PID hot|cold [SECONDS]')
  process.exit(2)
}
const info = JSON.parse(readFileSync(meta, 'utf8'))
const workload = which === 'hot'
  ? hotWorkload(info.items, info.companies, 2000, 1)
  : coldWorkload(info.companies, 100_000, 20_000, 1)
const connections = Number(process.env.LOAD_CONNECTIONS ?? 32)
if (!Number.isInteger(connections) || connections < 1) throw new TypeError(`LOAD_CONNECTIONS must be a whole number above 0, got ${JSON.stringify(process.env.LOAD_CONNECTIONS)}`)
const settings = { client: wrkVersion() === null ? 'autocannon' as const : 'wrk' as const, connections, warmupSeconds: 2, durationSeconds: Number(seconds) }
await warmUp(Number(port), workload.warmup, settings)
const result = await sample(Number(port), Number(pid), workload.measured, settings)
console.log(`${which}: ${Math.round(result.requests / result.seconds)} req/s; server ${result.serverCores.toFixed(2)} cores, client ${result.clientCores.toFixed(2)}; errors ${result.errors}, non-2xx ${result.non2xx}, timeouts ${result.timeouts}`)
