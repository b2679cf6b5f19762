// A replica following SNAPSHOT_URL (a real HTTP publisher) and its operator's versions: a rollback after
// two publishes serves the previous version from the kept file, with no download; while pinned a newer
// object is noticed (status `newest`), not downloaded; a restart keeps the pin; unpin loads the newest.
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { SnapshotLoader } from '../../src/snapshot/load/load-snapshot.js'
import { EXPLORE, tempDir, toJsonLines, versioned, type SnapshotDoc } from '../helpers.js'
import { SecretUrl } from '../../src/secret-url.js'

const TOKEN = 'a-token-for-the-tests-0123456789'
/** Large enough for a load to take measurable time, small enough for a shared machine; ROLLBACK_ITEMS for more (ADR 025). */
const ITEMS = Number(process.env.ROLLBACK_ITEMS ?? 4000)

async function publisher (t: Test) {
  let body = Buffer.alloc(0)
  const gets: Array<{ status: number }> = []
  let current = ''
  const etag = () => `"${createHash('sha1').update(body).digest('hex')}"`
  /** While set, a GET waits for it (a slow publisher), and `held` resolves when one does. */
  let hold: { released: Promise<void>, arrived: () => void } | null = null
  const server = createServer(async (request, response) => {
    if (hold !== null && request.method === 'GET') {
      const { released, arrived } = hold
      arrived()
      await released
    }
    if (current === '') {
      // Nothing published yet: the replica's first check, begun at its start, finds nothing (not an empty body).
      response.writeHead(404).end()
    } else if (request.headers['if-none-match'] === etag()) {
      response.writeHead(304, { etag: etag() }).end()
    } else {
      response.writeHead(200, { etag: etag(), 'content-length': body.length })
      response.end(request.method === 'HEAD' ? undefined : body)
    }
    if (request.method === 'GET') gets.push({ status: response.statusCode })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/exports/snapshot.jsonl`,
    /** GETs answered with the object (a 304 sends nothing). */
    sent: () => gets.filter(get => get.status === 200).length,
    publish (doc: SnapshotDoc) {
      current = toJsonLines(doc)
      body = Buffer.from(current)
    },
    published: () => current,
    /** Holds GETs until `release` is called; `arrived` resolves when the first held one comes in. */
    holdGets () {
      let release = (): void => {}
      let arrived = (): void => {}
      const released = new Promise<void>(resolve => { release = resolve })
      const came = new Promise<void>(resolve => { arrived = resolve })
      hold = { released, arrived }
      return { arrived: came, release: () => { hold = null; release() } }
    }
  }
}

async function replica (t: Test, url: string, dir: string): Promise<{ app: FastifyInstance, ops: string }> {
  const app = await buildApp(loadConfig({
    overrides: { logLevel: 'silent', snapshotUrl: new SecretUrl(url), snapshotCacheDir: join(dir, 'cache'), stateDir: join(dir, 'state'), snapshotPollSeconds: 3600, opsPort: 0, opsToken: TOKEN }
  }))
  t.teardown(() => app.close())
  await app.ready()
  const ops = `http://127.0.0.1:${(await app.ops!.listen()).port}`
  return { app, ops }
}

/**
 * A check begun after what the test published: the replica's own first check, begun at its start, may still
 * be under way (it asked before the publish and fails; `checkNow` would only join it).
 */
async function check (app: FastifyInstance): Promise<void> {
  await app.snapshotSource.reloadAsked()
  await app.snapshotVersions!.kept.idle()
}

async function act (ops: string, action: string): Promise<{ status: number, body: any, ms: number }> {
  const started = performance.now()
  const res = await fetch(`${ops}/-/${action}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })
  const body = await res.json()
  return { status: res.status, body, ms: performance.now() - started }
}

/** A replica that served two publishes, rolled back to the first (pinned), and stopped: its directory and publisher. */
async function pinnedThenStopped (t: Test) {
  const site = await publisher(t)
  const dir = await tempDir(t)
  const before = await replica(t, site.url, dir)
  site.publish(versioned(1, { count: 50 }))
  await check(before.app)
  site.publish(versioned(2, { count: 50 }))
  await check(before.app)
  t.equal((await act(before.ops, 'rollback')).status, 200)
  await before.app.close()
  return { site, dir }
}

/** Pages of the API as bytes, through the operator's port (the same router). */
async function pages (ops: string): Promise<string[]> {
  return await Promise.all(['?limit=7', '?limit=7&offset=7', `?limit=100&offset=${ITEMS - 10}`].map(async query => {
    const res = await fetch(`${ops}${EXPLORE}${query}`)
    return `${res.headers.get('etag') ?? ''}\n${await res.text()}`
  }))
}

t.test('after two publishes, rollback serves the previous version without a download, as first served; unpin loads the newest', async t => {
  const site = await publisher(t)
  const dir = await tempDir(t)
  const { app, ops } = await replica(t, site.url, dir)
  site.publish(versioned(1, { count: ITEMS }))
  const downloaded = performance.now()
  await check(app)
  const downloadMs = performance.now() - downloaded
  const first = await pages(ops)
  site.publish(versioned(2, { count: ITEMS }))
  await check(app)
  t.equal(site.sent(), 2)
  const newest = site.published()
  const listed = await (await fetch(`${ops}/-/versions`)).json() as any
  t.equal(listed.kept.length, 2)
  t.equal(listed.kept[1].source, site.url, 'a kept version names the object it came from')

  const asked = performance.now()
  const swapped = once(app.snapshots, 'reloaded').then(() => performance.now() - asked)
  const rolled = await act(ops, 'rollback')
  t.equal(rolled.status, 200)
  t.equal(rolled.body.served.generatedAt, versioned(1).generated_at)
  t.equal(site.sent(), 2, 'no download')
  t.same(await pages(ops), first, 'byte for byte the pages first served for it')

  // What a load of that file costs alone, for comparison (the rollback's time includes HTTP and the pin).
  const started = performance.now()
  const model = await new SnapshotLoader().load(join(dir, 'state', 'versions', rolled.body.served.version, 'snapshot.jsonl'), { serving: true })
  const loadMs = performance.now() - started
  model.memory.retire()
  t.comment(`${ITEMS} items: rollback served after ${(await swapped).toFixed(0)} ms, answered after ${rolled.ms.toFixed(0)} ms; the first check (download and load) ${downloadMs.toFixed(0)} ms; a load of the kept file alone ${loadMs.toFixed(0)} ms`)

  // Pinned: a newer object is noticed (its answer's headers read, its body dropped), not downloaded.
  site.publish(versioned(3, { count: ITEMS }))
  await check(app)
  t.equal(site.sent(), 3, 'asked for once')
  t.equal(await readFile(app.snapshots.file, 'utf8'), newest, 'the cached copy is still the newest downloaded: nothing was stored')
  const status = await (await fetch(`${ops}/-/status`)).json() as any
  t.match(status.newest, { source: site.url, etag: /^"/ })
  t.equal(status.snapshot.generatedAt, versioned(1).generated_at, 'still the pinned version')
  await check(app)
  t.equal(site.sent(), 3, 'and not sent again while it is the one noticed (a 304)')

  const unpinned = await act(ops, 'unpin')
  t.equal(unpinned.status, 200)
  t.equal(unpinned.body.pin, null)
  t.equal(unpinned.body.newest, null)
  t.equal(unpinned.body.served.generatedAt, versioned(3).generated_at, 'the newest object is loaded at once')
  t.equal(site.sent(), 4, 'downloaded once unpinned')
  t.equal(unpinned.body.kept.length, 3)
})

t.test('unpinned while a check begun under the pin is under way: that check only notices, so another one loads the newest', async t => {
  const site = await publisher(t)
  const dir = await tempDir(t)
  const { app, ops } = await replica(t, site.url, dir)
  site.publish(versioned(1))
  await check(app)
  site.publish(versioned(2))
  await check(app)
  t.equal((await act(ops, 'rollback')).body.served.generatedAt, versioned(1).generated_at)

  site.publish(versioned(3))
  const slow = site.holdGets()
  const underPin = app.snapshotSource!.checkNow()
  await slow.arrived
  // Unpinned: the cached copy is served again (a reload), then the source is checked; only then the held answer comes.
  const cachedCopyServed = once(app.snapshots, 'reloaded')
  const unpinning = act(ops, 'unpin')
  await cachedCopyServed
  slow.release()
  await underPin
  const unpinned = await unpinning
  t.equal(unpinned.status, 200)
  t.equal(unpinned.body.served.generatedAt, versioned(3).generated_at, 'the newest object is loaded, not only noticed')
})

t.test('a pin survives a restart of a replica following a source: it serves the pinned version, not the cached copy', async t => {
  const { site, dir } = await pinnedThenStopped(t)

  const after = await replica(t, site.url, dir)
  await check(after.app)
  t.equal(after.app.snapshots.current()?.info.generatedAt, versioned(1).generated_at, 'the pinned version')
  t.equal(site.sent(), 2, 'nothing downloaded: the source still has the version held back')
  const unpinned = await act(after.ops, 'unpin')
  t.equal(unpinned.body.served.generatedAt, versioned(2).generated_at, 'unpin serves the cached copy, the newest')
  t.equal(site.sent(), 2, 'which is not downloaded again')
})

t.test('a pin survives a restart with an empty cache: the pinned version is served from its kept file', async t => {
  const { site, dir } = await pinnedThenStopped(t)
  // The cache directory emptied (a new disk, a cleaned machine); the state directory kept.
  await rm(join(dir, 'cache'), { recursive: true })

  const after = await replica(t, site.url, dir)
  await check(after.app)
  t.equal(after.app.snapshots.current()?.info.generatedAt, versioned(1).generated_at, 'the pinned version, served')
  t.match((await (await fetch(`${after.ops}/-/status`)).json() as any).newest, { source: site.url }, 'the published object is noticed: nothing of it is held')
  const unpinned = await act(after.ops, 'unpin')
  t.equal(unpinned.body.served.generatedAt, versioned(2).generated_at, 'unpin downloads and serves it')
})
