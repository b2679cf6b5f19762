// deploy/nginx/explore-replica.conf run by Debian's nginx, its placeholder lines alone replaced (nginx-placeholders.ts),
// with a self-signed certificate made here, in front of two replicas (node dist/server.js, TRUST_PROXY=true,
// ALLOWED_HOSTS=the public host): through TLS, with the public Host, pages answer as the replica does, gzip-encoded
// when asked, and every next/previous link says https:// and that host. Skipped, with the reason, where nginx or
// openssl is not installed (.ci/run installs nginx).
import t, { type Test } from 'tap'
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect as http2Connect } from 'node:http2'
import { connect as tlsConnect } from 'node:tls'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { gunzipSync } from 'node:zlib'
import { BUILT_SERVER as SERVER, childEnv, eventually, EXPLORE, freePort, smallSnapshot, tempDir, watchOutput, writeSnapshot } from '../helpers.js'
import { mainConfig, NGINX_CONF_TEXT, PUBLIC_HOST, withPlaceholders } from './nginx-placeholders.js'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find(existsSync)
const OPENSSL = ['/usr/bin/openssl', '/bin/openssl'].find(existsSync)

interface Answer { status: number, headers: IncomingHttpHeaders, body: Buffer }
interface Page { count: number, next: string | null, previous: string | null, results: unknown[] }

function skipReason (): string | false {
  if (NGINX === undefined || spawnSync(NGINX, ['-v']).status !== 0) return 'nginx is not installed (Debian: apt-get install nginx; .ci/run does it as root)'
  if (OPENSSL === undefined || spawnSync(OPENSSL, ['version']).status !== 0) return 'openssl is not installed (Debian: apt-get install openssl): no certificate for nginx'
  return false
}

/** A self-signed certificate for the public host (its own CA: a client given it as `ca` verifies nginx). */
async function certificate (dir: string): Promise<{ certificate: string, key: string, pem: Buffer }> {
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')]
  await promisify(execFile)(OPENSSL as string, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-days', '2', '-subj', `/CN=${PUBLIC_HOST}`, '-addext', `subjectAltName=DNS:${PUBLIC_HOST}`, '-keyout', key, '-out', cert])
  return { certificate: cert, key, pem: await readFile(cert) }
}

/** A replica as deployed behind the proxy: dist/server.js, resolved with its port once it listens with its snapshot loaded. */
async function replica (t: Test, snapshot: string): Promise<number> {
  const child = spawn(process.execPath, [SERVER], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', SNAPSHOT_PATH: snapshot, SNAPSHOT_CACHE_DIR: await tempDir(t), TRUST_PROXY: 'true', ALLOWED_HOSTS: PUBLIC_HOST, LOG_LEVEL: 'info' })
  })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const { logged, text } = watchOutput(child)
  await Promise.all([logged(/"msg":"Server listening at http/), logged(/"msg":"snapshot loaded"/)])
  return Number((/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)[,"]/.exec(text()) as RegExpExecArray)[1])
}

/** nginx on the file, checked (`nginx -t`: no error, no warning) then started; resolves once its TLS port answers. */
async function startNginx (t: Test, dir: string, conf: string, httpsPort: number): Promise<ChildProcess> {
  await mkdir(join(dir, 'temp'), { recursive: true })
  await writeFile(join(dir, 'explore-replica.conf'), conf)
  const main = join(dir, 'nginx.conf')
  await writeFile(main, mainConfig(dir, join(dir, 'explore-replica.conf')))
  const check = spawnSync(NGINX as string, ['-t', '-p', dir, '-c', main], { encoding: 'utf8' })
  t.equal(check.status, 0, 'nginx -t accepts the file')
  t.notMatch(check.stderr, /\[(warn|emerg|crit|alert)\]/, `nginx -t says no more than that it is fine: ${check.stderr}`)
  const nginx = spawn(NGINX as string, ['-p', dir, '-c', main], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  nginx.stderr.on('data', chunk => { stderr += chunk })
  t.teardown(() => { if (nginx.exitCode === null && nginx.signalCode === null) nginx.kill('SIGQUIT') })
  await eventually(`nginx answering TLS on ${httpsPort}`, async () => {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${stderr}`)
    const up = await new Promise<boolean>(resolve => {
      const socket = tlsConnect({ host: '127.0.0.1', port: httpsPort, servername: PUBLIC_HOST, rejectUnauthorized: false }, () => { socket.end(); resolve(true) })
      socket.on('error', () => resolve(false))
    })
    return up ? true : undefined
  })
  return nginx
}

function collect (resolve: (answer: Answer) => void, reject: (error: Error) => void) {
  return (res: import('node:http').IncomingMessage) => {
    const chunks: Buffer[] = []
    res.on('data', (chunk: Buffer) => chunks.push(chunk))
    res.on('end', () => resolve({ status: res.statusCode as number, headers: res.headers, body: Buffer.concat(chunks) }))
    res.on('error', reject)
  }
}

/** GET through nginx's TLS port as a client of the public host would: SNI and Host name it, the certificate is verified. */
function viaTls (port: number, ca: Buffer, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    httpsRequest({ host: '127.0.0.1', port, path, servername: PUBLIC_HOST, ca, agent: false, headers: { host: PUBLIC_HOST, ...headers } }, collect(resolve, reject))
      .on('error', reject).end()
  })
}

/** GET straight from a replica (no proxy, so no X-Forwarded-*): the answer nginx's is compared with. */
function direct (port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path, agent: false, headers: { host: PUBLIC_HOST, ...headers } }, collect(resolve, reject))
      .on('error', reject).end()
  })
}

/** The body, gunzipped if nginx said it is gzip. */
function decoded (answer: Answer): Buffer {
  return answer.headers['content-encoding'] === 'gzip' ? gunzipSync(answer.body) : answer.body
}

function json (answer: Answer): Page {
  return JSON.parse(decoded(answer).toString('utf8')) as Page
}

/** The page `direct` gave, with its links as a client of the proxy should see them. */
function asProxied (page: Page): Page {
  const https = (link: string | null) => link === null ? null : link.replace(`http://${PUBLIC_HOST}/`, `https://${PUBLIC_HOST}/`)
  return { ...page, next: https(page.next), previous: https(page.previous) }
}

const LINK = new RegExp(`^https://${PUBLIC_HOST.replace(/\./g, '\\.')}${EXPLORE.replace(/\//g, '\\/')}\\?`)

const skip = skipReason()
t.test('deploy/nginx/explore-replica.conf in front of two replicas, through TLS', { skip }, async t => {
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: npm run build first (npm run test:e2e does)`)
  const dir = await tempDir(t)
  const cert = await certificate(dir)
  const snapshot = await writeSnapshot(t, smallSnapshot())
  const replicas = [await replica(t, snapshot), await replica(t, snapshot)]
  const [httpPort, httpsPort] = [await freePort(), await freePort()]
  const conf = withPlaceholders(NGINX_CONF_TEXT, { httpPort, httpsPort, certificate: cert.certificate, key: cert.key, upstreams: replicas.map(port => `127.0.0.1:${port}`) })
  await startNginx(t, join(dir, 'nginx'), conf, httpsPort)

  t.test('every page a client walks through: the replica\'s answer, gzip-encoded when asked, links https:// on the public host', async t => {
    let path: string | null = `${EXPLORE}?companies=8&limit=3`
    let pages = 0
    let compressed = 0
    let previous = 0
    // Bounded: company 8 has 17 items, 6 pages of 3.
    for (; path !== null && pages < 20; pages++) {
      const proxied = await viaTls(httpsPort, cert.pem, path, { 'accept-encoding': 'gzip' })
      const mine = await direct(replicas[0] as number, path)
      t.equal(proxied.status, 200, `${path}: 200`)
      // gzip_min_length: pages of 1 KiB and more are compressed, smaller ones not worth it are not (the
      // size of the replica's answer to nginx, its links https://, a byte longer each than the direct one's).
      const size = decoded(proxied).length
      const big = size >= 1024
      t.equal(proxied.headers['content-encoding'], big ? 'gzip' : undefined, `${path}: ${big ? 'gzip' : 'identity'} (${size} bytes)`)
      if (big) {
        compressed++
        t.match(proxied.headers.vary, /Accept-Encoding/i, 'gzip_vary: caches keep the two encodings apart')
      }
      const page = json(proxied)
      t.same(page, asProxied(json(mine)), `${path}: the replica's page, its links https://`)
      for (const link of [page.next, page.previous]) if (link !== null) t.match(link, LINK, `${link} names https://${PUBLIC_HOST}`)
      if (page.previous !== null) previous++
      // The next page as a client reaches it: the link's host, through the proxy.
      path = page.next === null ? null : (url => { t.equal(url.host, PUBLIC_HOST); return `${url.pathname}${url.search}` })(new URL(page.next))
    }
    t.equal(pages, 6, 'every page of company 8, to the last')
    t.ok(compressed > 0 && previous > 0, `${compressed} pages were gzip-encoded, ${previous} had a previous link`)
  })

  t.test('without Accept-Encoding: the same page, not compressed', async t => {
    const path = `${EXPLORE}?limit=5&offset=5`
    const proxied = await viaTls(httpsPort, cert.pem, path)
    t.equal(proxied.status, 200)
    t.equal(proxied.headers['content-encoding'], undefined)
    t.same(json(proxied), asProxied(json(await direct(replicas[1] as number, path))))
  })

  t.test('HTTP/2, as a browser asks: the same page and links', async t => {
    const path = `${EXPLORE}?companies=7&limit=2&offset=2`
    // Authority news.example.com (port 443's), the connection to nginx's loopback port.
    const session = http2Connect(`https://${PUBLIC_HOST}`, {
      createConnection: () => tlsConnect({ host: '127.0.0.1', port: httpsPort, servername: PUBLIC_HOST, ca: cert.pem, ALPNProtocols: ['h2'] })
    })
    t.teardown(() => session.close())
    const answer = await new Promise<Answer>((resolve, reject) => {
      const stream = session.request({ ':path': path, 'accept-encoding': 'gzip' })
      const chunks: Buffer[] = []
      let headers: IncomingHttpHeaders = {}
      stream.on('response', h => { headers = h as IncomingHttpHeaders })
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks) }))
      stream.on('error', reject)
    })
    t.equal((session.socket as import('node:tls').TLSSocket).alpnProtocol, 'h2', 'nginx spoke HTTP/2')
    t.equal(answer.status, 200)
    const page = json(answer)
    t.same(page, asProxied(json(await direct(replicas[0] as number, path))))
    t.match(page.next, LINK)
    t.match(page.previous, LINK)
  })

  t.test('a Host the replicas do not allow is refused, never linked to', async t => {
    const refused = await viaTls(httpsPort, cert.pem, `${EXPLORE}?limit=1`, { host: 'evil.example.org' })
    t.equal(refused.status, 400)
    t.notMatch(refused.body.toString(), 'evil.example.org')
  })

  t.test('plain HTTP is sent to https:// on the public host', async t => {
    const answer = await new Promise<Answer>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: httpPort, path: `${EXPLORE}?limit=1`, agent: false, headers: { host: PUBLIC_HOST } }, collect(resolve, reject))
        .on('error', reject).end()
    })
    t.equal(answer.status, 301)
    t.equal(answer.headers.location, `https://${PUBLIC_HOST}${EXPLORE}?limit=1`)
  })
})
