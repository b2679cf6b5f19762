// WORKERS=2, the real entry point: /-/requests shows every serving thread's requests, DELETE resets them all, and a
// request gets the same trouble whichever thread answers it, the same as with one thread (ADR 041).
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { hasReusePort } from '../../src/serving/serving-mode.js'
import type { Journal } from '../../src/schemas/request-journal.js'
import { BUILT_SERVER as SERVER, childEnv, freePort, tempDir, watchOutput } from '../helpers.js'

const skip = hasReusePort() ? false : `serving threads need Node 22.12 or later (reusePort); this is Node ${process.versions.node}`
const TROUBLE = { CHAOS_SEED: '7', FAIL_RATE: '0.4', CHAOS: 'true' }

async function serve (t: Test, workers: number): Promise<string> {
  const port = await freePort()
  const child = spawn(process.execPath, [SERVER, '--port', String(port), '--workers', String(workers)], {
    env: childEnv({ ...TROUBLE, LOG_LEVEL: 'info', STATE_DIR: join(await tempDir(t), 'state') }), stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  // The start's last line.
  await watchOutput(child).logged(/"msg":"console"/)
  return `http://127.0.0.1:${port}`
}

/** Each on a connection of its own: the kernel spreads connections, not requests, between the threads. */
async function statuses (origin: string, paths: string[]): Promise<number[]> {
  return await Promise.all(paths.map(async path => {
    const response = await fetch(`${origin}${path}`, { headers: { connection: 'close' } })
    await response.arrayBuffer()
    return response.status
  }))
}

async function journal (origin: string): Promise<Journal> {
  return await (await fetch(`${origin}/-/requests?path=/en/api/internal/explore/`, { headers: { connection: 'close' } })).json() as Journal
}

const PAGES = Array.from({ length: 40 }, (_, i) => `/en/api/internal/explore/?limit=1&offset=${i}`)

t.test('/-/requests shows both threads\' requests; each request\'s trouble is what one thread draws for it', { skip }, async t => {
  const two = await serve(t, 2)
  const one = await serve(t, 1)
  // Each page twice: the second asking is a draw of its own, wherever it lands.
  const asked = [...PAGES, ...PAGES]
  await statuses(two, PAGES)
  await statuses(two, PAGES)
  await statuses(one, PAGES)
  await statuses(one, PAGES)
  const [byTwo, byOne] = [await journal(two), await journal(one)]
  t.equal(byTwo.requests.length, asked.length, 'every request of both threads')
  t.same(byTwo.journal.threads, 2)
  t.same(new Set(byTwo.requests.map(entry => entry.thread)), new Set([0, 1]), 'answered by both threads')
  const trouble = (read: Journal): string[] => read.requests.map(entry => JSON.stringify([entry.url, entry.status, entry.trouble])).sort()
  t.same(trouble(byTwo), trouble(byOne), 'each asking of each page: the trouble one thread would have drawn')
  t.same(new Set(byTwo.requests.map(entry => entry.trouble?.draw)), new Set([0, 1]), 'first and second askings, counted across threads')

  const reset = await (await fetch(`${two}/-/requests`, { method: 'DELETE', headers: { connection: 'close' } })).json() as Journal
  t.match(reset.journal, { kept: 0, threads: 2 }, 'both threads\' journals forgotten')
  t.same((await journal(two)).requests, [])
  await statuses(two, PAGES)
  t.same((await journal(two)).requests.map(entry => entry.trouble?.draw), PAGES.map(() => 0), 'the askings started over, in both threads')
})
