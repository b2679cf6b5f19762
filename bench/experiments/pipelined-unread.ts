// What a server holds for clients that pipeline requests and never read the answers (ADR 046): N connections each
// writing K requests for pages of limit=100 at once, RSS before and 5 s into the attack, each server a fresh process
// on the sample snapshot (PAGE_CACHE_MB=0: nothing shared between answers), servers alternating round by round.
// `npx tsx bench/experiments/pipelined-unread.ts [SERVER_ENTRY ...] [--connections N] [--requests K] [--indent]
// [--rounds R]`: the built server (dist/server.js) by default; give a baseline's dist/server.js after it. Linux only.
import { mkdtemp, rm } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { freePort, memoryOf, startService, stopChild, waitUntilAnswering } from '../processes.js'

const root = resolve(import.meta.dirname, '../..')
const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    connections: { type: 'string', default: '20' },
    requests: { type: 'string', default: '700' },
    indent: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '2' }
  }
})
const entries = (positionals.length > 0 ? positionals : [join(root, 'dist/server.js')]).map(entry => resolve(entry))
const connections = Number(options.connections)
const requests = Number(options.requests)
const MB = 1024 * 1024

/** The rise of the server's RSS while the attack holds its connections open. */
async function attacked (entry: string): Promise<number> {
  const stateDir = await mkdtemp(join(tmpdir(), 'pipelined-unread-'))
  const port = await freePort()
  const server = startService(entry, {
    snapshot: join(root, 'data/snapshot.json'), port, stateDir, env: { PAGE_CACHE_MB: '0', LOG_LEVEL: 'warn' }
  })
  const sockets: Socket[] = []
  try {
    await waitUntilAnswering(server, `http://127.0.0.1:${port}/-/readyz`, 60_000)
    await delay(1000)
    const before = (await memoryOf(server.pid)).rssBytes
    const accept = options.indent ? 'Accept: application/json; indent=4\r\n' : ''
    for (let c = 0; c < connections; c++) {
      const socket = connect(port, '127.0.0.1')
      socket.on('error', () => {})
      await new Promise(resolve => socket.once('connect', resolve))
      // Never read: the answers back up in the server, or wait unmade.
      socket.pause()
      socket.write(Array.from({ length: requests }, (_, r) =>
        `GET /en/api/internal/explore/?companies=3&limit=100&offset=${(c * requests + r) % 150} HTTP/1.1\r\nHost: x\r\n${accept}\r\n`).join(''))
      sockets.push(socket)
    }
    await delay(5000)
    return (await memoryOf(server.pid)).rssBytes - before
  } finally {
    for (const socket of sockets) socket.destroy()
    await stopChild(server)
    await rm(stateDir, { recursive: true, force: true })
  }
}

const mb = (bytes: number): string => `${bytes >= 0 ? '+' : ''}${Math.round(bytes / MB)} MB`
const rises = new Map<string, number[]>(entries.map(entry => [entry, []]))
for (let round = 0; round < Number(options.rounds); round++) {
  for (const entry of round % 2 === 0 ? entries : [...entries].reverse()) rises.get(entry)?.push(await attacked(entry))
}
console.log(`${connections} connections × ${requests} pipelined requests (limit=100${options.indent ? ', indented' : ''}), never read; Node ${process.version}\n`)
console.log('| Server | RSS rise, each round | median |\n|---|--:|--:|')
for (const [entry, each] of rises) {
  const sorted = [...each].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)] as number
  console.log(`| ${entry} | ${each.map(mb).join(', ')} | ${mb(median)} |`)
}
