// The fleet, end to end: a publisher (a real HTTP server with ETags), two replicas (real processes) that
// follow it, and Debian's nginx in front with bench/nginx-config.ts (deploy/nginx/explore-replica.conf's upstream and
// proxy directives, plain HTTP: TLS is test/deploy/nginx-tls.e2e.test.ts's). Skipped, with the reason, where nginx is
// not installed (.ci/run installs it).
import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { nginxConfig } from '../bench/nginx-config.js'
import { BUILT_SERVER as SERVER, childEnv, freePort, tempDir, toJsonLines, versioned, watchOutput } from './helpers.js'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find(existsSync)

/** A publisher of one snapshot URL, with ETags and 304s. */
async function publisher (t: Test) {
  let body = toJsonLines(versioned(1))
  const etag = () => `"${createHash('sha1').update(body).digest('hex')}"`
  const server = createServer((request, response) => {
    if (request.headers['if-none-match'] === etag()) return response.writeHead(304, { etag: etag() }).end()
    response.writeHead(200, { etag: etag(), 'content-length': Buffer.byteLength(body) })
    response.end(request.method === 'HEAD' ? undefined : body)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/explore/snapshot.jsonl`,
    publish (text: string) { body = text }
  }
}

/** A replica process following `url`; resolves once it listens. */
async function replica (t: Test, url: string, port: number) {
  const child = spawn(process.execPath, [SERVER, '--snapshot-url', url, '--snapshot-cache-dir', await tempDir(t),
    '--snapshot-poll-seconds', '3600', '--port', String(port), '--shutdown-grace-ms', '5000'],
  { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info' }) })
  const { logged } = watchOutput(child)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await logged(/Server listening at/)
  return { child, logged, port }
}

async function startNginx (t: Test, dir: string, port: number, upstreams: number[]): Promise<ChildProcess> {
  await mkdir(join(dir, 'temp'), { recursive: true })
  const conf = join(dir, 'nginx.conf')
  // The shipped file's upstream and proxy directives, on loopback ports, in the foreground, with every file in `dir`.
  await writeFile(conf, nginxConfig(dir, port, upstreams))
  const nginx = spawn(NGINX as string, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  nginx.stderr.on('data', chunk => { stderr += chunk })
  t.teardown(() => { if (nginx.exitCode === null) nginx.kill('SIGQUIT') })
  // Up once it answers; an error exits it first.
  for (;;) {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${stderr}`)
    const up = await fetch(`http://127.0.0.1:${port}/-/healthz`).then(res => res.ok, () => false)
    if (up) return nginx
    await new Promise(resolve => setImmediate(resolve))
  }
}

async function titleVia (port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/en/api/internal/explore/?limit=1`)
  if (res.status !== 200) throw new Error(`status ${res.status}`)
  return ((await res.json()) as { results: Array<{ translated_title: string }> }).results[0]!.translated_title
}

if (NGINX === undefined || spawnSync(NGINX, ['-v']).status !== 0) {
  t.test('two replicas behind nginx', { skip: 'nginx is not installed (Debian: apt-get install nginx; .ci/run does it as root)' }, () => {})
} else {
  t.test('two replicas behind nginx follow one publisher, survive a bad publish, and one stops under load with no failed request', async t => {
    const site = await publisher(t)
    const [portA, portB, front] = [await freePort(), await freePort(), await freePort()]
    const a = await replica(t, site.url, portA)
    const b = await replica(t, site.url, portB)
    await Promise.all([a.logged(/"msg":"snapshot reloaded"/), b.logged(/"msg":"snapshot reloaded"/)])
    await startNginx(t, await tempDir(t), front, [portA, portB])
    t.match(await titleVia(front), /^v1 /)

    // Publish: both follow (SIGHUP checks the source now, instead of waiting for the poll).
    site.publish(toJsonLines(versioned(2)))
    a.child.kill('SIGHUP')
    b.child.kill('SIGHUP')
    await Promise.all([a.logged(/"msg":"snapshot reloaded"/, 2), b.logged(/"msg":"snapshot reloaded"/, 2)])
    const titles = new Set<string>()
    for (let i = 0; i < 10; i++) titles.add((await titleVia(front)).split(' ')[0] as string)
    t.same([...titles], ['v2'], 'every answer through nginx is the new snapshot')

    // A bad publish: both keep serving and stay ready.
    site.publish('{"language": "en", "pk": 1}\n')
    a.child.kill('SIGHUP')
    b.child.kill('SIGHUP')
    await Promise.all([a.logged(/snapshot source check failed/), b.logged(/snapshot source check failed/)])
    for (const port of [portA, portB]) {
      t.equal((await fetch(`http://127.0.0.1:${port}/-/readyz`)).status, 200, `replica on ${port} stays ready`)
    }
    t.match(await titleVia(front), /^v2 /)

    // SIGTERM one replica while clients keep asking through nginx: no request fails.
    const load = { running: true }
    let answered = 0
    const failures: string[] = []
    // Resolves once `count` more answers have come (the clients call `counted` after each).
    let waiting: { target: number, resolve: () => void } | null = null
    const more = (count: number) => new Promise<void>(resolve => { waiting = { target: answered + count, resolve } })
    const counted = () => {
      if (waiting !== null && answered >= waiting.target) {
        waiting.resolve()
        waiting = null
      }
    }
    const client = async () => {
      while (load.running) {
        try {
          const res = await fetch(`http://127.0.0.1:${front}/en/api/internal/explore/?limit=5`)
          await res.arrayBuffer()
          if (res.status === 200) answered++
          else failures.push(`status ${res.status}`)
          counted()
        } catch (error) {
          failures.push((error as Error).message)
        }
      }
    }
    // Under load first: some answers through both replicas; then the stop, and more answers after it.
    const warmed = more(200)
    const clients = Array.from({ length: 8 }, client)
    await warmed
    a.child.kill('SIGTERM')
    const [code] = await once(a.child, 'exit')
    await more(200)
    load.running = false
    await Promise.all(clients)
    t.equal(code, 0, 'the stopped replica exited cleanly')
    t.same(failures, [], `${answered} answers, none failed while a replica stopped`)
  })
}
