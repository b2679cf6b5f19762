// Credentials for an HTTP(S) SNAPSHOT_URL, in the real server as an operator runs it: never in its logs,
// pages or files, and a start they cannot apply to ends with the message alone (the in-process checks are
// http-credentials.test.ts).
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { BUILT_SERVER as SERVER, childEnv, eventually, tempDir, toJsonLines, versioned, watchOutput } from '../helpers.js'
import { everything, origin } from './credential-origin.js'

const started = new Set<ChildProcess>()
t.teardown(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** The real server, as an operator runs it: its whole output (logs, and stderr at startup) kept. */
function startServer (env: Record<string, string>) {
  const child = spawn(process.execPath, [SERVER], { env: childEnv({ PORT: '0', ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
  started.add(child)
  const output = watchOutput(child)
  const exited = once(child, 'close').then(([code]) => code as number | null)
  return { child, output, exited }
}

/** Every operator's page that names the source: status, console, metrics, versions. */
async function operatorPages (address: string): Promise<string> {
  const pages = await Promise.all(['/-/status', '/-/', '/-/metrics', '/-/versions'].map(async path => await (await fetch(`${address}${path}`)).text()))
  return pages.join('\n')
}

t.test('a user and password in SNAPSHOT_URL are sent as Basic authentication, percent-decoded, and are nowhere else: status, console, metrics, logs, errors, cache', async t => {
  const user = 'usér'
  const password = 'p@ss:wörd'
  const basic = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
  const site = await origin(t, headers => headers.authorization === basic)
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(1)))
  const userinfo = `${encodeURIComponent(user)}:${encodeURIComponent(password)}`
  const url = `${site.origin}/exports/snapshot.jsonl`
  const cacheDir = await tempDir(t)
  const server = startServer({ SNAPSHOT_URL: url.replace('//', `//${userinfo}@`), SNAPSHOT_CACHE_DIR: cacheDir, SNAPSHOT_POLL_SECONDS: '3600', LOG_LEVEL: 'trace' })
  await server.output.logged(/"msg":"Server listening at http/)
  const address = (/"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[,"]/.exec(server.output.text()) as RegExpExecArray)[1] as string
  const first = await Promise.race([
    eventually('the snapshot served', async () => (await fetch(`${address}/-/readyz`)).status === 200 ? true : undefined).then(() => 'served'),
    server.output.logged(/snapshot source check failed/).then(() => 'failed', () => 'exited')
  ])
  if (first !== 'served') return t.fail(`the first check did not serve the snapshot:\n${server.output.text()}`)

  // Published again (a GET, then a HEAD to tell it did not change meanwhile), then failing: a 500, a 401.
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(2)))
  server.child.kill('SIGHUP')
  await eventually('the new publish served', async () => (await (await fetch(`${address}/en/api/internal/explore/?limit=1`)).text()).includes('"v2 ') ? true : undefined)
  site.answer((_request, response) => { response.writeHead(500).end() })
  server.child.kill('SIGHUP')
  await server.output.logged(/snapshot source check failed/)
  site.answer((_request, response) => { response.writeHead(401).end() })
  server.child.kill('SIGHUP')
  await server.output.logged(/snapshot source check failed/, 2)

  const status = await (await fetch(`${address}/-/status`)).json() as { source: { url: string, errors: number, lastError: { message: string } } }
  t.equal(status.source.url, url, 'shown without its user and password')
  t.equal(status.source.lastError.message, `${url} refused the credentials (401 Unauthorized): check the user and password in SNAPSHOT_URL or SNAPSHOT_HTTP_HEADERS`)
  t.equal(status.source.errors, 2)
  const shown = await operatorPages(address)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  t.ok(site.seen.some(request => request.method === 'HEAD'), 'a HEAD was asked too')
  t.same(site.seen.filter(request => request.headers.authorization !== basic), [], 'every request had the Basic credentials')
  t.match(server.output.text(), /refused the credentials \(401 Unauthorized\)/, 'the refusal is logged')
  const secrets = [user, encodeURIComponent(user), password, encodeURIComponent(password), basic.slice('Basic '.length)]
  for (const [where, text] of [['status, console, metrics, versions', shown], ['the log', server.output.text()], ['the cache and state files', await everything(cacheDir)]]) {
    for (const secret of secrets) t.notOk(text!.includes(secret!), `${where}: no ${JSON.stringify(secret)}`)
  }
})

t.test('credentials that cannot apply stop the real server: exit 1, the message, no stack trace, no secret', async t => {
  const cacheDir = await tempDir(t)
  const server = startServer({ SNAPSHOT_URL: 'https://reader:secret@exports.example/snapshot.jsonl', SNAPSHOT_HTTP_HEADERS: 'Authorization: Bearer abc123', SNAPSHOT_CACHE_DIR: cacheDir })
  // Should it start anyway, it is stopped rather than left to tap's timeout.
  const listened = await server.output.logged(/"msg":"Server listening at/).then(() => true, () => false)
  if (listened) server.child.kill('SIGKILL')
  t.notOk(listened, 'never listens')
  t.equal(await server.exited, 1)
  t.match(server.output.text(), /^configuration error: SNAPSHOT_URL has a user and password/)
  t.notMatch(server.output.text(), /\n\s+at |abc123|secret/)
})

t.test('a signed URL\'s query (?sig=…) goes to the origin and is shown nowhere: status, console, versions, metrics, logs, errors, cache and state', async t => {
  const signature = 'sig=S3cr3tSignature&se=2099-01-01&sp=r'
  const site = await origin(t)
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(1)))
  const url = `${site.origin}/exports/snapshot.jsonl`
  const cacheDir = await tempDir(t)
  const server = startServer({ SNAPSHOT_URL: `${url}?${signature}`, SNAPSHOT_CACHE_DIR: cacheDir, SNAPSHOT_POLL_SECONDS: '3600', LOG_LEVEL: 'trace' })
  await server.output.logged(/"msg":"Server listening at http/)
  const address = (/"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[,"]/.exec(server.output.text()) as RegExpExecArray)[1] as string
  await eventually('the snapshot served', async () => (await fetch(`${address}/-/readyz`)).status === 200 ? true : undefined)

  // Published again, then failing: a 500, a 403, a redirect to a URL that is not one, a connection refused.
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(2)))
  server.child.kill('SIGHUP')
  await eventually('the new publish served', async () => (await (await fetch(`${address}/en/api/internal/explore/?limit=1`)).text()).includes('"v2 ') ? true : undefined)
  const failures = [
    (_request: unknown, response: import('node:http').ServerResponse) => { response.writeHead(500).end() },
    (_request: unknown, response: import('node:http').ServerResponse) => { response.writeHead(403).end() },
    (_request: unknown, response: import('node:http').ServerResponse) => { response.writeHead(302, { location: `gopher://elsewhere/x.jsonl?${signature}` }).end() },
    (_request: unknown, response: import('node:http').ServerResponse) => { response.socket?.destroy() }
  ]
  for (const [i, failure] of failures.entries()) {
    site.answer(failure)
    server.child.kill('SIGHUP')
    await server.output.logged(/snapshot source check failed/, i + 1)
  }

  const status = await (await fetch(`${address}/-/status`)).json() as { source: { url: string, errors: number, lastError: { message: string } } }
  t.equal(status.source.url, `${url}?…`, 'shown with its query as ?…')
  t.equal(status.source.errors, failures.length)
  t.ok(site.seen.length > 0 && site.seen.every(request => request.url === `/exports/snapshot.jsonl?${signature}`), 'every request carried the signed query')
  const shown = await operatorPages(address)
  t.match(shown, `${url}?…`, 'the URL is still named')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  for (const [where, text] of [['status, console, metrics, versions', shown], ['the log', server.output.text()], ['the cache and state files', await everything(cacheDir)]]) {
    for (const secret of ['S3cr3tSignature', 'sig=', 'se=2099']) t.notOk(text!.includes(secret), `${where}: no ${JSON.stringify(secret)}`)
  }
})

t.test('a configuration error about SNAPSHOT_URL shows it without its query', async t => {
  const server = startServer({ SNAPSHOT_URL: 'https://exports.example/snapshot.csv?sig=S3cr3tSignature', SNAPSHOT_CACHE_DIR: await tempDir(t) })
  t.equal(await server.exited, 1)
  t.match(server.output.text(), /^configuration error: SNAPSHOT_URL="https:\/\/exports\.example\/snapshot\.csv\?…": must name a \.json/)
  t.notMatch(server.output.text(), /S3cr3tSignature|sig=/)
})
