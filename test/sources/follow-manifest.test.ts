// SNAPSHOT_URL naming a fleet's manifest over HTTP (src/sources/follow-manifest.ts): the snapshot, then each
// change downloaded alone, a step back with no download, bad manifests refused with the last good state
// served, and a restart during an outage served from the cache. The publisher's folder is served by a
// small HTTP server that counts the bytes it sends.
import t, { type Test } from 'tap'
import { readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { makeItem, tempDir, toJsonLines, versioned } from '../helpers.js'
import { serveDirectory } from './counting-servers.js'

/** A publisher's folder, served over HTTP: objects and the manifest written as `publish` writes them. */
async function fleet (t: Test) {
  const dir = await tempDir(t)
  const site = await serveDirectory(t, dir)
  const put = async (name: string, text: string) => {
    await writeFile(join(dir, name), text)
    return Buffer.byteLength(text)
  }
  const manifest = async (snapshot: string, changes: string[] = [], text?: string) => {
    await put('manifest.json', text ?? JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes }))
  }
  const change = (id: string, lines: object[]) => [{ changes: 'explore', version: 1, id }, ...lines].map(line => `${JSON.stringify(line)}\n`).join('')
  return { dir, site, put, manifest, change, url: `${site.origin}/manifest.json` }
}

/** A replica following `url`; its versions and pin in a state directory beside its cache (never the default one). */
async function follower (t: Test, url: string, cacheDir: string): Promise<FastifyInstance> {
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotUrl: url, snapshotCacheDir: cacheDir, stateDir: join(cacheDir, 'state'), snapshotPollSeconds: 3600 } }))
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/** A replica that followed a manifest through two snapshots (v1, then v2): the fleet, its cache and the app. */
async function followingTwo (t: Test) {
  const { put, manifest, url } = await fleet(t)
  const cacheDir = await tempDir(t)
  await put('snap-1.jsonl', toJsonLines(versioned(1)))
  await manifest('snap-1.jsonl')
  const app = await follower(t, url, cacheDir)
  await app.snapshotSource!.checkNow()
  await put('snap-2.jsonl', toJsonLines(versioned(2)))
  await manifest('snap-2.jsonl')
  await app.snapshotSource!.checkNow()
  return { put, manifest, url, cacheDir, app }
}

/** followingTwo, rolled back to v1 (pinned) and stopped: its cache's objects, and a restart that has checked once. */
async function rolledBackAndStopped (t: Test) {
  const { cacheDir, app, url } = await followingTwo(t)
  await app.snapshotVersions!.rollback()
  await app.close()
  const objects = join(cacheDir, (await readdir(cacheDir)).find(entry => entry.startsWith('manifest-'))!, 'objects')
  const restart = async (): Promise<FastifyInstance> => {
    const restarted = await follower(t, url, cacheDir)
    await restarted.snapshotSource!.checkNow()
    return restarted
  }
  return { objects, restart }
}

/** The title of the `en` item with pk 1, and how many `en` items there are. */
async function served (app: FastifyInstance): Promise<{ count: number, first: string } | null> {
  const res = await app.inject('/en/api/internal/explore/?limit=100')
  if (res.statusCode !== 200) return null
  const body = res.json()
  return { count: body.count, first: body.results.find((item: { pk: number }) => item.pk === 1)?.translated_title ?? '(gone)' }
}

const lastError = async (app: FastifyInstance): Promise<string | undefined> => (await app.inject('/-/status')).json().source.lastError?.message

t.test('a manifest is followed: the snapshot, then each change alone, a step back without download, a 304 for nothing', async t => {
  const { site, put, manifest, change, url } = await fleet(t)
  const snapshotBytes = await put('snap-1.jsonl', toJsonLines(versioned(1)))
  await manifest('snap-1.jsonl')
  const app = await follower(t, url, await tempDir(t))
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 21, first: 'v1 item 1' })
  t.equal(site.sent('snap-1.jsonl'), snapshotBytes, 'the snapshot downloaded once')

  const changeBytes = await put('chg-0001.jsonl', change('chg-0001', [
    { op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [0], { translated_title: 'changed 1' }) },
    { op: 'delete', language: 'en', pk: 2 }
  ]))
  await manifest('snap-1.jsonl', ['chg-0001.jsonl'])
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 20, first: 'changed 1' })
  t.equal(site.sent('chg-0001.jsonl'), changeBytes, 'the change downloaded')
  t.equal(site.sent('snap-1.jsonl'), snapshotBytes, 'and the snapshot not again')

  const manifestBytes = site.sent('manifest.json')
  await app.snapshotSource!.checkNow()
  t.equal(site.sent('manifest.json'), manifestBytes, 'an unchanged manifest costs a 304 and no bytes')

  site.reset()
  await manifest('snap-1.jsonl')
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 21, first: 'v1 item 1' }, 'a manifest that lists less steps back')
  t.same([...site.bytes.keys()], ['/manifest.json'], 'with nothing downloaded but the manifest')
  await manifest('snap-1.jsonl', ['chg-0001.jsonl'])
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 20, first: 'changed 1' }, 'and forward again')
  t.same([...site.bytes.keys()], ['/manifest.json'], 'still with nothing downloaded: the change is held')

  site.reset()
  const nextBytes = await put('snap-2.jsonl', toJsonLines(versioned(2)))
  await manifest('snap-2.jsonl')
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 22, first: 'v2 item 1' }, 'a new snapshot is served whole')
  t.equal(site.sent('snap-2.jsonl'), nextBytes)
  t.match((await app.inject('/-/status')).json().source, { url, lastError: null, errors: 0 })
})

t.test('bad manifests are refused, each with its reason; the last good state stays served and ready', async t => {
  const { put, manifest, change, url } = await fleet(t)
  await put('snap-1.jsonl', toJsonLines(versioned(1)))
  await put('chg-bad.jsonl', change('chg-bad', [{ op: 'upsert', language: 'en', pk: 5 }]))
  await manifest('snap-1.jsonl')
  const app = await follower(t, url, await tempDir(t))
  await app.snapshotSource!.checkNow()
  const good = await served(app)
  t.same(good, { count: 21, first: 'v1 item 1' })

  const cases: Array<[string, string | [string, string[]], RegExp]> = [
    ['not JSON', '{"manifest": "explore", "snapshot": ', /^the manifest is refused: not JSON/],
    ['wrong fields', '{"manifest": "explore", "version": 1, "snapshot": 7, "changes": []}', /^the manifest is refused: snapshot: expected a string, got 7/],
    ['a name escaping the prefix', ['../snap-1.jsonl', []], /^the manifest is refused: snapshot: "\.\.\/snap-1\.jsonl" is not a name beside the manifest/],
    ['an absolute URL', ['snap-1.jsonl', ['http://elsewhere.example/chg.jsonl']], /^the manifest is refused: changes\[0\]: "http:\/\/elsewhere\.example\/chg\.jsonl" is not a name beside the manifest/],
    ['a missing object', ['snap-1.jsonl', ['chg-0404.jsonl']], /^the manifest names chg-0404\.jsonl, which cannot be downloaded: http:\/\/127\.0\.0\.1:\d+\/chg-0404\.jsonl answered 404 Not Found$/],
    ['a bad change file', ['snap-1.jsonl', ['chg-bad.jsonl']], /^the manifest's snapshot and changes do not load, still serving the last good state \(.*chg-bad\.jsonl:2: is_translated: is required/]
  ]
  for (const [what, text, reason] of cases) {
    if (typeof text === 'string') await manifest('', [], text)
    else await manifest(text[0], text[1])
    await app.snapshotSource!.checkNow()
    t.match(await lastError(app), reason, what)
    t.same(await served(app), good, `${what}: the last good state is served`)
    t.equal((await app.inject('/-/readyz')).statusCode, 200, `${what}: still ready`)
  }
  t.match((await app.inject('/-/status')).json().source, { errors: cases.length })
})

t.test('a restart while the publisher is down serves the cached manifest and its objects', async t => {
  const { site, put, manifest, change, url } = await fleet(t)
  await put('snap-1.jsonl', toJsonLines(versioned(1)))
  await put('chg-0001.jsonl', change('chg-0001', [{ op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [0], { translated_title: 'changed 1' }) }]))
  await manifest('snap-1.jsonl', ['chg-0001.jsonl'])
  const cacheDir = await tempDir(t)
  const first = await follower(t, url, cacheDir)
  await first.snapshotSource!.checkNow()
  t.same(await served(first), { count: 21, first: 'changed 1' })
  await first.close()

  await site.close()

  const restarted = await follower(t, url, cacheDir)
  await restarted.snapshotSource.start(restarted.snapshotVersions)
  t.same(await served(restarted), { count: 21, first: 'changed 1' }, 'the cached chain is served before any check')
  await restarted.snapshotSource!.checkNow()
  t.match(await lastError(restarted), /could not be reached/)
  t.same(await served(restarted), { count: 21, first: 'changed 1' }, 'and while the publisher cannot be reached')
  t.equal((await readdir(cacheDir)).filter(name => name.startsWith('manifest-')).length, 1, 'one folder for the manifest URL')
})

t.test('pinned, a replica following a manifest notices a newer one and serves the pin, across a restart; unpin serves the newest', async t => {
  const { put, manifest, url, cacheDir, app } = await followingTwo(t)
  t.same(await served(app), { count: 22, first: 'v2 item 1' })

  await app.snapshotVersions!.rollback()
  t.same(await served(app), { count: 21, first: 'v1 item 1' }, 'rolled back and pinned')
  await put('snap-3.jsonl', toJsonLines(versioned(3)))
  await manifest('snap-3.jsonl')
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 21, first: 'v1 item 1' }, 'a newer manifest is not served while pinned')
  t.not((await app.inject('/-/status')).json().newest, null, 'it is noticed')
  await app.close()

  const restarted = await follower(t, url, cacheDir)
  await restarted.snapshotSource!.checkNow()
  t.same(await served(restarted), { count: 21, first: 'v1 item 1' }, 'a restart serves the pinned version')
  await restarted.snapshotVersions!.unpin()
  t.same(await served(restarted), { count: 23, first: 'v3 item 1' }, 'unpinned: the newest manifest at once')
})

t.test('pinned across a restart with the manifest unchanged: nothing is noticed; an object gone from the cache is downloaded at unpin', async t => {
  const { objects, restart } = await rolledBackAndStopped(t)
  const restarted = await restart()
  t.same(await served(restarted), { count: 21, first: 'v1 item 1' }, 'the pinned version')
  t.equal((await restarted.inject('/-/status')).json().newest, null, 'the manifest held is the published one: nothing newer to notice')
  // The cached manifest's snapshot is gone (a disk cleaned by hand): unpin downloads it, and serves it.
  await rm(join(objects, 'snap-2.jsonl'))
  await restarted.snapshotVersions!.unpin()
  t.same(await served(restarted), { count: 22, first: 'v2 item 1' }, 'unpinned: the published manifest, downloaded again')
})

t.test('unpinned, a cached object that does not load is not served as if nothing were newer: the check asks again and says why', async t => {
  const { objects, restart } = await rolledBackAndStopped(t)
  // A disk that corrupted a cached object: its name is held, its bytes are not a snapshot.
  await writeFile(join(objects, 'snap-2.jsonl'), '{"not": "a snapshot"')
  const restarted = await restart()
  await restarted.snapshotVersions!.unpin()
  t.match(await lastError(restarted), /do not load/, 'the failure is reported, not hidden behind a 304')
  t.same(await served(restarted), { count: 21, first: 'v1 item 1' }, 'the last good state stays served')
})
