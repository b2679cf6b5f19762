// A bare Node HTTP server (no Fastify, no model) answering every request with 23,000 bytes, to see what
// building a fresh answer costs by itself. Modes: `same` re-sends one buffer (what the cold ceiling does);
// `reuse` gathers 20 slices of a 200 MB arena into that one buffer; `slab` gathers into slices of 1 MiB
// slabs; `fresh` gathers into a new Buffer.allocUnsafe each time; `pool` gathers into buffers reused once
// their answer has finished; `views` copies nothing and writes the 20 slices themselves, in one tick (Node
// sends them in one writev), as the service writes an uncached page. `contig20` writes 20 slices that lie
// side by side at a random place of the arena, `contig` the same 23,000 bytes as one slice: what a page
// stored contiguously would cost (ADR 035).
// LIKE_SERVICE=timeout,listener,headers (or all) adds what the service's HTTP server does besides
// answering: request and socket timeouts, a second 'request' listener, reading three request headers.
// The floor behind ADR 004 and the cold target's known limit (BENCHMARKS.md). Measure it with the bench's
// client: `npx tsx bench/experiments/load-once.ts META PORT PID cold`.
// Usage: [LIKE_SERVICE=all] node --import tsx bench/experiments/raw-gather-server.ts MODE PORT &
// (node itself, not npx: load-once.ts reads the server's CPU by the pid `$!` gives)
import { createServer, type ServerResponse } from 'node:http'

const [mode = 'same', port = '3222'] = process.argv.slice(2)
const SIZE = 23_000
const ITEM = 1150
const same = Buffer.alloc(SIZE, 97)
const arena = Buffer.alloc(200 * 1024 * 1024, 98)
const headers = ['content-type', 'application/json', 'content-length', String(SIZE)]
let seed = 1
let slab = Buffer.allocUnsafe(1 << 20)
let slabAt = 0

function slabSlice (): Buffer {
  if (slabAt + SIZE > slab.length) {
    slab = Buffer.allocUnsafe(1 << 20)
    slabAt = 0
  }
  slabAt += SIZE
  return slab.subarray(slabAt - SIZE, slabAt)
}

const pool: Buffer[] = []
function pooled (): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(SIZE)
}

function gathered (): Buffer {
  const body = mode === 'reuse' ? same : mode === 'slab' ? slabSlice() : mode === 'pool' ? pooled() : Buffer.allocUnsafe(SIZE)
  for (let i = 0; i < SIZE / ITEM; i++) {
    const at = randomAt(ITEM)
    arena.copy(body, i * ITEM, at, at + ITEM)
  }
  return body
}

function randomAt (room: number): number {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed % (arena.length - 2 * room)
}

function sendViews (response: ServerResponse): void {
  for (let i = 0; i < SIZE / ITEM; i++) {
    const at = randomAt(ITEM)
    response.write(arena.subarray(at, at + ITEM))
  }
  response.end()
}

function sendContiguous (response: ServerResponse, pieces: number): void {
  const at = randomAt(SIZE)
  const step = SIZE / pieces
  for (let i = 0; i < pieces; i++) response.write(arena.subarray(at + i * step, at + (i + 1) * step))
  response.end()
}

// LIKE_SERVICE=timeout|listener|headers|all: what the service's server does besides answering.
const like = process.env.LIKE_SERVICE ?? ''
const has = (what: string): boolean => like === 'all' || like.split(',').includes(what)
// No Host needed, as in the service (a client script that sends none still measures answers, not 400s).
const server = createServer({ maxHeaderSize: 16 * 1024, requireHostHeader: false }, (request, response) => {
  // Three headers read, as the service reads them; the test is never true of a real client.
  if (has('headers') && [request.headers.host, request.headers['if-none-match'], request.headers.accept].includes('\n')) return
  response.writeHead(200, headers)
  if (mode === 'views') sendViews(response)
  else if (mode === 'contig20') sendContiguous(response, SIZE / ITEM)
  else if (mode === 'contig') sendContiguous(response, 1)
  else if (mode === 'pool') {
    const body = gathered()
    response.end(body, () => pool.push(body))
  } else response.end(mode === 'same' ? same : gathered())
}).listen(Number(port), '127.0.0.1')
if (has('timeout')) { server.requestTimeout = 10_000; server.setTimeout(60_000) }
// A second listener that marks the socket, as the graceful close's does.
if (has('listener')) server.on('request', request => { (request.socket as typeof request.socket & { used?: boolean }).used = true })
process.on('SIGINT', () => process.exit(0))
