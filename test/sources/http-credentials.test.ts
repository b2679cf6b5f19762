// Credentials for an HTTP(S) SNAPSHOT_URL: a user:password in the URL (Basic authentication) and
// SNAPSHOT_HTTP_HEADERS, sent to the URL's origin (a manifest's objects included) and nowhere else, never
// shown; a 401 or 403 said as refused credentials. Real HTTP servers on 127.0.0.1; the test drives each check.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { makeItem, tempDir, toJsonLines, versioned } from '../helpers.js'
import { origin } from './credential-origin.js'
import { SecretUrl } from '../../src/secret-url.js'

async function followingApp (t: Test, config: Parameters<typeof loadConfig>[0] & { overrides: Partial<Config> }): Promise<FastifyInstance> {
  const cacheDir = await tempDir(t)
  const app = await buildApp(loadConfig({ ...config, overrides: { logLevel: 'silent', snapshotCacheDir: cacheDir, stateDir: join(cacheDir, 'state'), snapshotPollSeconds: 3600, ...config.overrides } }))
  t.teardown(() => app.close())
  await app.ready()
  return app
}

async function servedVersion (app: FastifyInstance): Promise<number | null> {
  const res = await app.inject('/en/api/internal/explore/?limit=1')
  if (res.statusCode !== 200) return null
  return Number(/^v(\d+) /.exec((JSON.parse(res.body) as { results: Array<{ translated_title: string }> }).results[0]!.translated_title)?.[1])
}

const lastError = async (app: FastifyInstance): Promise<string | undefined> => (await app.inject('/-/status')).json().source.lastError?.message

t.test('SNAPSHOT_HTTP_HEADERS go with every request for the snapshot, GET and HEAD, and are never shown', async t => {
  const site = await origin(t, headers => headers.authorization === 'Bearer abc123' && headers['x-api-key'] === 'key-5ecret')
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(1)))
  const url = `${site.origin}/exports/snapshot.jsonl`
  const app = await followingApp(t, { env: { SNAPSHOT_HTTP_HEADERS: 'Authorization: Bearer abc123\n\nX-Api-Key:key-5ecret\n' }, overrides: { snapshotUrl: new SecretUrl(url) } })
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(2)))
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 2)
  t.same(site.seen.map(request => request.method), ['GET', 'HEAD', 'GET', 'HEAD'])
  t.same(site.seen.filter(request => request.headers.authorization !== 'Bearer abc123' || request.headers['x-api-key'] !== 'key-5ecret'), [], 'every request had both headers')
  const shown = (await app.inject('/-/status')).body + (await app.inject('/-/')).body + (await app.inject('/-/metrics')).body
  t.notMatch(shown, /abc123|key-5ecret/)
})

t.test('a manifest\'s snapshot and change files are fetched with SNAPSHOT_HTTP_HEADERS too (given as a JSON object)', async t => {
  const site = await origin(t, headers => headers['x-api-key'] === 'key-5ecret')
  const change = [{ changes: 'explore', version: 1, id: 'chg-0001' }, { op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [0], { translated_title: 'v3 changed' }) }]
  site.files.set('/fleet/snap-1.jsonl', toJsonLines(versioned(1)))
  site.files.set('/fleet/chg-0001.jsonl', change.map(line => `${JSON.stringify(line)}\n`).join(''))
  site.files.set('/fleet/manifest.json', JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-1.jsonl', changes: ['chg-0001.jsonl'] }))
  const app = await followingApp(t, { env: { SNAPSHOT_HTTP_HEADERS: '{"X-Api-Key": "key-5ecret"}' }, overrides: { snapshotUrl: new SecretUrl(`${site.origin}/fleet/manifest.json`) } })
  await app.snapshotSource!.checkNow()
  t.equal(await lastError(app), undefined)
  t.match((await app.inject('/en/api/internal/explore/?limit=100')).body, '"v3 changed"', 'the snapshot and its change served')
  t.same(site.seen.map(request => request.path).sort(), ['/fleet/chg-0001.jsonl', '/fleet/manifest.json', '/fleet/snap-1.jsonl'])
  t.same(site.seen.filter(request => request.headers['x-api-key'] !== 'key-5ecret'), [], 'each with the header')
})

t.test('a 401 or 403 is said as refused credentials (or as none given), and counts as an error of the source', async t => {
  const site = await origin(t)
  site.files.set('/exports/snapshot.jsonl', toJsonLines(versioned(1)))
  const url = `${site.origin}/exports/snapshot.jsonl`
  const app = await followingApp(t, { overrides: { snapshotUrl: new SecretUrl(url.replace('//', '//reader:secret@')), snapshotHttpHeaders: { 'X-Api-Key': 'key-5ecret' } } })
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
  for (const status of [401, 403]) {
    site.answer((_request, response) => { response.writeHead(status).end() })
    await app.snapshotSource!.checkNow()
    t.equal(await lastError(app), `${url} refused the credentials (${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}): check the user and password in SNAPSHOT_URL or SNAPSHOT_HTTP_HEADERS`)
    t.equal(await servedVersion(app), 1, 'still serving the last good snapshot')
  }
  t.equal((await app.inject('/-/status')).json().source.errors, 2)
  t.match((await app.inject('/-/metrics')).body, /explore_snapshot_source_checks_total\{outcome="error"\} 2/)

  // Without credentials: said so, not as credentials refused.
  site.answer((_request, response) => { response.writeHead(403).end() })
  const bare = await followingApp(t, { overrides: { snapshotUrl: new SecretUrl(url) } })
  await bare.snapshotSource!.checkNow()
  t.equal(await lastError(bare), `${url} refused the request, which had no credentials (403 Forbidden): give a user and password in SNAPSHOT_URL or a header in SNAPSHOT_HTTP_HEADERS`)
})

t.test('a manifest\'s object answering 403 is said as refused credentials, naming the object', async t => {
  const site = await origin(t)
  site.files.set('/fleet/manifest.json', JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-1.jsonl', changes: [] }))
  site.answer((request, response) => {
    if (request.url === '/fleet/snap-1.jsonl') return response.writeHead(403).end()
    response.writeHead(200).end(site.files.get('/fleet/manifest.json'))
  })
  const app = await followingApp(t, { overrides: { snapshotUrl: new SecretUrl(`${site.origin}/fleet/manifest.json`), snapshotHttpHeaders: { Authorization: 'Bearer abc123' } } })
  await app.snapshotSource!.checkNow()
  t.equal(await lastError(app), `the manifest names snap-1.jsonl, which cannot be downloaded: ${site.origin}/fleet/snap-1.jsonl refused the credentials (403 Forbidden): check the user and password in SNAPSHOT_URL or SNAPSHOT_HTTP_HEADERS`)
  t.equal((await app.inject('/-/status')).json().source.errors, 1)
})

t.test('the credentials go to SNAPSHOT_URL\'s origin only: a redirect to another origin gets neither Basic authentication nor SNAPSHOT_HTTP_HEADERS', async t => {
  const elsewhere = await origin(t)
  elsewhere.files.set('/cdn/snapshot.jsonl', toJsonLines(versioned(1)))
  const site = await origin(t)
  // Within the origin first (the credentials kept), then to another one (dropped).
  site.answer((request, response) => {
    const location = request.url === '/exports/snapshot.jsonl' ? '/moved/snapshot.jsonl' : `${elsewhere.origin}/cdn/snapshot.jsonl`
    response.writeHead(302, { location }).end()
  })
  const url = `${site.origin}/exports/snapshot.jsonl`
  const app = await followingApp(t, { overrides: { snapshotUrl: new SecretUrl(url.replace('//', '//reader:secret@')), snapshotHttpHeaders: { 'X-Api-Key': 'key-5ecret' } } })
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1, 'served from where the redirects lead')
  const basic = `Basic ${Buffer.from('reader:secret').toString('base64')}`
  // The download (GET), then whether it changed meanwhile (HEAD): each redirected twice.
  t.same(site.seen.map(request => [request.method, request.path, request.headers.authorization, request.headers['x-api-key']]), [
    ['GET', '/exports/snapshot.jsonl', basic, 'key-5ecret'],
    ['GET', '/moved/snapshot.jsonl', basic, 'key-5ecret'],
    ['HEAD', '/exports/snapshot.jsonl', basic, 'key-5ecret'],
    ['HEAD', '/moved/snapshot.jsonl', basic, 'key-5ecret']
  ], 'the SNAPSHOT_URL\'s origin gets them, after a redirect within it too')
  t.ok(elsewhere.seen.length > 0)
  t.same(elsewhere.seen.filter(request => request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined), [], 'the other origin gets neither')

  elsewhere.answer((_request, response) => { response.writeHead(403).end() })
  elsewhere.files.set('/cdn/snapshot.jsonl', toJsonLines(versioned(2)))
  await app.snapshotSource!.checkNow()
  t.equal(await lastError(app), `${url} was redirected to ${elsewhere.origin}, which answered 403 Forbidden: the credentials are sent to ${site.origin} only`)
})

t.test('credentials that cannot apply stop the start with a ConfigError naming the variables, never a secret', async t => {
  const cacheDir = await tempDir(t)
  const start = async (overrides: Partial<Config>) => await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotCacheDir: cacheDir, stateDir: join(cacheDir, 'state'), ...overrides } }))
  const refused = async (overrides: Partial<Config>, message: RegExp, name: string) => {
    const error = await start(overrides).then(app => app.close(), (error: unknown) => error) as Error | undefined
    t.match(error, { name: 'ConfigError', message }, name)
    t.notMatch(error?.message ?? '', /abc123|secret/, `${name}: no secret in the message`)
  }
  await refused({ snapshotUrl: new SecretUrl('s3://bucket/snapshot.jsonl'), snapshotHttpHeaders: { Authorization: 'Bearer abc123' } },
    /^SNAPSHOT_HTTP_HEADERS is for an http\(s\):\/\/ SNAPSHOT_URL: an s3:\/\/ one is signed with the AWS settings/, 'headers for an s3:// URL')
  await refused({ snapshotUrl: new SecretUrl('s3://reader:secret@bucket/snapshot.jsonl') }, /^SNAPSHOT_URL: an s3:\/\/ URL takes no user or password/, 'a user:password in an s3:// URL')
  await refused({ snapshotUrl: new SecretUrl('https://reader:secret@exports.example/snapshot.jsonl'), snapshotHttpHeaders: { authorization: 'Bearer abc123' } },
    /^SNAPSHOT_URL has a user and password \(sent as Basic authentication\) and SNAPSHOT_HTTP_HEADERS an Authorization header: give the credentials in one of them$/, 'Basic and an Authorization header')
})
