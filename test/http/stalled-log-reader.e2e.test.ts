// The real process (`node dist/server.js`) with its standard output a pipe that nobody reads, as a stuck log
// shipper leaves it, under load: it answers every page, stays ready, counts the lines it drops, says so once the
// reader reads again, and SIGTERM still ends it within the grace period. WORKERS=2 where serving threads run.
import t, { type Test } from 'tap'
import http from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { hasReusePort } from '../../src/serving/serving-mode.js'
import { BUILT_SERVER as SERVER, childEnv, eventually, freePort, watchOutput } from '../helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')
// Long: a thread kept alive by a stuck log write is ended only near its end, and the test gives up well before.
const GRACE_MS = 60_000
const GIVE_UP_MS = 20_000

async function startStalled (t: Test, workers: number) {
  const port = await freePort()
  const child = spawn(process.execPath, [SERVER, '--snapshot-path', join(ROOT, 'data', 'snapshot.json'),
    '--port', String(port), '--workers', String(workers), '--shutdown-grace-ms', String(GRACE_MS)],
  { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info', LOG_PRETTY: 'false' }) })
  // Paused: the pipe fills and stays full, as a reader that holds it open and reads nothing leaves it.
  child.stdout.pause()
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal }))
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  t.teardown(() => { agent.destroy() })
  const get = async (path: string): Promise<{ status: number, body: string }> => await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, response => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', chunk => { body += chunk })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }) })
    }).on('error', reject)
  })
  await eventually('the first snapshot served', async () =>
    (await get('/-/readyz').catch(() => null))?.status === 200 ? true : undefined)
  const dropped = async (): Promise<number> =>
    Number(/^explore_log_lines_dropped_total (\d+)/m.exec((await get('/-/metrics')).body)?.[1] ?? 0)
  return { child, exited, get, dropped }
}

/** Pages, eight at a time, until the service says it drops log lines; every answer checked. */
async function loadUntilDropping (t: Test, server: Awaited<ReturnType<typeof startStalled>>): Promise<number> {
  const statuses = new Map<number, number>()
  let sent = 0
  for (;;) {
    const batch = Array.from({ length: 400 }, (_, i) =>
      server.get(`/en/api/internal/explore/?companies=${1 + ((sent + i) % 5)}&limit=5&offset=${(sent + i) % 50}`))
    for (const { status } of await Promise.all(batch)) statuses.set(status, (statuses.get(status) ?? 0) + 1)
    sent += batch.length
    const dropped = await server.dropped()
    // 200,000 lines are ~40 MB: far past any pipe and the buffer; a logger that never drops fails here.
    if (dropped > 0 || sent >= 200_000) {
      t.same([...statuses.keys()], [200], `${sent} pages, every one answered 200`)
      return dropped
    }
  }
}

for (const workers of [1, 2]) {
  const skip = workers > 1 && !hasReusePort()
    ? `serving threads need Node 22.12 or later (reusePort); this is Node ${process.versions.node}`
    : false

  t.test(`WORKERS=${workers}: a reader that stops costs log lines, counted, and then says so`, { skip }, async t => {
    const server = await startStalled(t, workers)
    t.ok(await loadUntilDropping(t, server) > 0, 'log lines dropped, and counted in explore_log_lines_dropped_total')
    t.equal((await server.get('/-/readyz')).status, 200, 'still ready')
    // The reader reads again: one line says how many were dropped.
    const { logged } = watchOutput(server.child)
    server.child.stdout.resume()
    await server.get('/en/api/internal/explore/?companies=1')
    await logged(/"msg":"log lines dropped: the log's reader did not keep up"/)
  })

  t.test(`WORKERS=${workers}: SIGTERM ends it at once, not at the grace period's end, while the reader still reads nothing`, { skip }, async t => {
    const server = await startStalled(t, workers)
    await loadUntilDropping(t, server)
    server.child.kill('SIGTERM')
    const late = setTimeout(() => { server.child.kill('SIGKILL') }, GIVE_UP_MS)
    const { code, signal } = await server.exited
    clearTimeout(late)
    t.equal(signal, null, 'not killed: it ended on its own')
    t.equal(code, 0, 'a clean exit')
  })
}
