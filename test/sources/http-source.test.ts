// SNAPSHOT_URL over HTTP, against a real HTTP server that sends ETags and Last-Modified and answers
// conditional requests: each check is driven by the test (checkNow), never by waiting for the poll.
import t from 'tap'
import type { ServerResponse } from 'node:http'
import { readdir, readFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import { tempDir, toJsonLines, versioned } from '../helpers.js'
import { followingApp, publisher, servedVersion, sourceStatus, type Handler } from './http-publisher.js'

t.test('a published snapshot is downloaded, served, kept in the cache, and an unchanged one costs a 304', async t => {
  const site = await publisher(t)
  const cacheDir = await tempDir(t)
  const app = await followingApp(t, site.url, cacheDir)
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
  t.equal((await app.inject('/-/readyz')).statusCode, 200)
  const status = await sourceStatus(app)
  t.match(status, { url: site.url, etag: site.etag(), lastError: null, errors: 0 })
  t.type(status.lastChanged, 'string')
  // Besides STATE_DIR's default, `state` (the kept versions).
  const files = (await readdir(cacheDir)).filter(name => name !== 'state').sort()
  t.equal(files.length, 2, 'the copy and what is known of it, no temporary file left')
  t.equal(await readFile(app.snapshots.file, 'utf8'), toJsonLines(versioned(1)), 'the cached copy is the object')

  await app.snapshotSource!.checkNow()
  t.same(site.seen.at(-1), { method: 'GET', ifNoneMatch: site.etag(), status: 304 }, 'asked with If-None-Match, answered 304')
  t.equal((await sourceStatus(app)).lastChanged, status.lastChanged, 'nothing changed')

  site.publish(versioned(2))
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 2, 'a new publish is served')
  t.equal((await sourceStatus(app)).etag, site.etag())
  const metrics = (await app.inject('/-/metrics')).body
  t.match(metrics, /explore_snapshot_source_checks_total\{outcome="ok"\} 3/)
})

t.test('SIGHUP\'s check (checkAgain) begins after the call: a check under way that asked before a publish is not taken for it', async t => {
  const site = await publisher(t)
  const app = await followingApp(t, site.url, await tempDir(t))
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
  // A check asks; its answer (unchanged) is held while the snapshot is published and the signal comes.
  const asked = new Promise<ServerResponse>(resolve => { site.answer((_request, response) => { resolve(response) }) })
  const underWay = app.snapshotSource!.checkNow()
  const held = await asked
  const unchanged = site.etag()
  site.answer(null)
  site.publish(versioned(2))
  const again = app.snapshotSource.reloadAsked()
  held.writeHead(304, { etag: unchanged }).end()
  await underWay
  t.equal(await servedVersion(app), 1, 'the check under way saw no change')
  await again
  t.equal(await servedVersion(app), 2, 'the check asked for after the publish loads it')
  t.equal(site.seen.filter(request => request.method === 'GET').length, 3, 'three checks: the first, the one under way, and the one after it')
})

t.test('a bad publish keeps the last good snapshot served and the replica ready; it is not downloaded again', async t => {
  const site = await publisher(t)
  const app = await followingApp(t, site.url, await tempDir(t))
  await app.snapshotSource!.checkNow()
  site.publish('{"language": "en", "pk": 1}\nnot json\n')
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
  t.match((await app.inject('/-/readyz')).json(), { status: 'ready' })
  t.match((await sourceStatus(app)).lastError, { message: /^the new object is not a valid snapshot \(snapshot-\w+\.download-\d+\.jsonl:1: is_translated: is required; .*; …\)$/ })
  const before = site.seen.length
  await app.snapshotSource!.checkNow()
  t.same(site.seen.slice(before), [{ method: 'GET', ifNoneMatch: site.etag(), status: 304 }], 'the refused object is not fetched again')
  site.publish(versioned(3))
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 3, 'the next good publish is served')
  t.equal((await sourceStatus(app)).lastError.message.includes('not a valid snapshot'), true, 'the last error stays on record')
})

t.test('an object over the memory budget is not downloaded again until it changes, as a bad one (ADR 045)', async t => {
  const site = await publisher(t)
  // Every estimate a hundredfold: nothing fits 64 MB.
  const app = await followingApp(t, site.url, await tempDir(t), { memoryLimitMb: 64, memoryEstimateScale: 100 })
  await app.snapshotSource!.checkNow()
  t.match((await sourceStatus(app)).lastError, { message: /^the new object does not fit in the memory budget \(.*needs ~[\d,]+ MB at its peak/ })
  const refused = site.etag()
  const before = site.seen.length
  await app.snapshotSource!.checkNow()
  t.same(site.seen.slice(before), [{ method: 'GET', ifNoneMatch: refused, status: 304 }], 'asked with the refused ETag: a 304, no download')
  site.publish(versioned(2))
  await app.snapshotSource!.checkNow()
  t.same(site.seen.filter(request => request.method === 'GET').at(-1), { method: 'GET', ifNoneMatch: refused, status: 200 }, 'a new publish is downloaded')
})

t.test('every failure of the source is a clear status entry, and the last good snapshot stays', async t => {
  const site = await publisher(t)
  const app = await followingApp(t, site.url, await tempDir(t), { snapshotMaxMb: 1 })
  await app.snapshotSource!.checkNow()
  const failsWith = async (name: string, handler: Handler, message: RegExp) => {
    site.answer(handler)
    await app.snapshotSource!.checkNow()
    t.match((await sourceStatus(app)).lastError, { message }, name)
    t.equal(await servedVersion(app), 1, `${name}: still serving`)
    site.answer(null)
  }
  await failsWith('a 500', (_q, s) => { s.writeHead(500).end('oops') }, /answered 500 Internal Server Error$/)
  await failsWith('a redirect loop', (q, s) => { s.writeHead(302, { location: q.url }).end() }, /could not be reached: redirect count exceeded/)
  await failsWith('a truncated download', (_q, s) => {
    s.writeHead(200, { 'content-length': 5000, etag: '"cut"' })
    // Headers and a first part sent, then the connection is gone.
    s.write('{"language": "en"', () => { s.destroy() })
  }, /download (failed|was cut short)/)
  await failsWith('an oversized object', (_q, s) => {
    s.writeHead(200, { 'content-length': 2 * 1024 * 1024, etag: '"big"' })
    s.end(Buffer.alloc(2 * 1024 * 1024, 0x20))
  }, /more than SNAPSHOT_MAX_MB allows/)
  await failsWith('an oversized object that does not say so', (q, s) => {
    if (q.method === 'HEAD') return s.writeHead(200, { etag: '"big"' }).end()
    s.writeHead(200, { etag: '"big"' })
    s.end(Buffer.alloc(2 * 1024 * 1024, 0x20))
  }, /more than SNAPSHOT_MAX_MB allows/)
  // 64 MiB in 64 KiB: decoded, it would pass the 1 MiB cap; it is refused before a byte is decoded.
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20))
  await failsWith('a gzip-encoded object, though identity was asked for', (q, s) => {
    s.writeHead(200, { 'content-encoding': 'gzip', 'content-length': bomb.length, etag: '"gz"' })
    s.end(q.headers['accept-encoding'] === 'identity' ? bomb : 'asked for an encoding')
  }, /^http:\/\/127\.0\.0\.1:\d+\/exports\/snapshot\.jsonl answered with Content-Encoding: gzip: snapshots, change files, manifests and images are downloaded unencoded, as stored/)
  let gets = 0
  await failsWith('an object that changes while it downloads', (q, s) => {
    // The download says one version; by the time it is whole, the source has another.
    const etag = q.method === 'HEAD' ? '"after"' : '"before"'
    if (q.method === 'GET') gets++
    s.writeHead(200, { etag })
    s.end(q.method === 'HEAD' ? undefined : toJsonLines(versioned(4)))
  }, /changed while it was downloaded/)
  t.equal(gets, 1)
  t.equal((await sourceStatus(app)).errors, 7)
  t.match((await app.inject('/-/metrics')).body, /explore_snapshot_source_checks_total\{outcome="error"\} 7/)
})

t.test('a replica restarting while the source is down serves its cached copy and keeps trying', async t => {
  const site = await publisher(t)
  const cacheDir = await tempDir(t)
  const first = await followingApp(t, site.url, cacheDir)
  await first.snapshotSource!.checkNow()
  await first.close()
  site.answer((_q, s) => { s.writeHead(503).end() })
  const again = await followingApp(t, site.url, cacheDir)
  await again.snapshotSource!.checkNow()
  t.equal(await servedVersion(again), 1, 'the cached copy is served')
  t.equal((await again.inject('/-/readyz')).statusCode, 200)
  t.match((await sourceStatus(again)).lastError, { message: /answered 503/ })
  site.answer(null)
  site.publish(versioned(5))
  await again.snapshotSource!.checkNow()
  t.equal(await servedVersion(again), 5, 'and follows the source once it is back')
})

t.test('a replica with no copy and an unreachable source stays unready, and serves once it is reachable', async t => {
  const site = await publisher(t)
  site.answer((q, s) => { q.socket.destroy(); s.destroy() })
  const app = await followingApp(t, site.url, await tempDir(t))
  await app.snapshotSource!.checkNow()
  t.equal((await app.inject('/-/readyz')).statusCode, 503)
  t.equal((await app.inject('/en/api/internal/explore/')).statusCode, 503)
  t.match((await sourceStatus(app)).lastError, { message: /could not be reached/ })
  site.answer(null)
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
})
