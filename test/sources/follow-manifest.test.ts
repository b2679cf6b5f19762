// A fleet's manifest: its text read (src/sources/read-manifest.ts), and SNAPSHOT_URL naming one followed over HTTP.
import t, { type Test } from 'tap'
import { copyFile, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { writeImageFile } from '../../src/cli/publish-command.js'
import { loadConfig, type Config } from '../../src/config.js'
import { ManifestError } from '../../src/errors.js'
import { IMAGE_FORMAT } from '../../src/snapshot/images/image-fingerprint.js'
import type { ManifestImage } from '../../src/schemas/manifest.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { makeItem, tempDir, toJsonLines, versioned, type SnapshotDoc } from '../helpers.js'
import { serveDirectory } from './counting-servers.js'
import { SecretUrl } from '../../src/secret-url.js'
import type { ManifestFollower } from '../../src/sources/follow-manifest.js'
import { manifestText, parseManifest } from '../../src/sources/read-manifest.js'

// src/sources/read-manifest.ts: a manifest's text read, refused with every reason, and written back.
const problemsOf = (text: string): readonly string[] => {
  try {
    parseManifest(text)
  } catch (error) {
    if (error instanceof ManifestError) return error.problems
    throw error
  }
  throw new Error('the manifest was accepted')
}

t.test('a manifest names a snapshot and its changes beside it; extra fields are kept', async t => {
  const text = '{"manifest": "explore", "version": 1, "snapshot": "snap-2026-11-24.jsonl", "changes": ["chg-0001.jsonl", "chg-0002.jsonl"], "note": "x"}'
  t.same(parseManifest(text), { manifest: 'explore', version: 1, snapshot: 'snap-2026-11-24.jsonl', changes: ['chg-0001.jsonl', 'chg-0002.jsonl'], note: 'x' })
  t.same(parseManifest(manifestText(parseManifest(text))), parseManifest(text), 'what the publisher writes reads back the same')
  t.match(manifestText({ manifest: 'explore', version: 1, snapshot: 's.json', changes: [] }), /^\{\n {2}"manifest": "explore",\n/)
})

t.test('an image described otherwise (an older publisher\'s, one missing what a replica trusts it by) is left out, never a refusal of the manifest', async t => {
  const base = { manifest: 'explore', version: 1, snapshot: 's.jsonl', changes: [] }
  const image = { name: 'a1b2.image', format: 2, by: '0.1.0', fingerprint: 'Ab_1-', snapshot: 'nzJERCv3ouXPuS5koBP-MahCJWI', digest: 'a'.repeat(64), bytes: 1024, later: 'kept' }
  t.same(parseManifest(JSON.stringify({ ...base, image })), { ...base, image }, 'one a replica may read is kept, with fields it does not know')
  const { fingerprint: _f, snapshot: _s, digest: _d, bytes: _b, ...older } = image
  for (const other of [older, { ...image, fingerprint: 'a b' }, { ...image, digest: 'A'.repeat(64) }, { ...image, bytes: -1 }, { ...image, snapshot: '../x' },
    { url: 'https://x.example/a.image', format: 1, by: '0.1.0' }, { ...image, by: 'x'.repeat(101) }, { ...image, name: 'a1b2.bin' }, 'a1b2.image']) {
    t.same(parseManifest(JSON.stringify({ ...base, image: other })), base, JSON.stringify(other).slice(0, 60))
  }
})

t.test('a bad manifest is refused with every reason', async t => {
  t.match(problemsOf('{"manifest": "explore", '), [/^not JSON/])
  t.same(problemsOf('["snap.jsonl"]'), ['not a manifest: expected a JSON object'])
  t.same(problemsOf('{"snapshot": "snap.jsonl"}'), ['manifest: is required', 'version: is required', 'changes: is required'])
  t.same(problemsOf('{"manifest": "explore", "version": 2, "snapshot": "snap.jsonl", "changes": "chg-0001.jsonl"}'), [
    'version: 2 is not 1',
    'changes: expected an array, got "chg-0001.jsonl"'
  ])
})

t.test('a name that leaves the manifest\'s folder is refused: no "..", no folders, no absolute path or URL', async t => {
  const manifest = (snapshot: string, changes: string[] = []) => JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes })
  for (const name of ['../snap.jsonl', '/etc/snap.jsonl', 'https://elsewhere.example/snap.jsonl', 'sub/snap.jsonl', '..\\snap.jsonl', '.hidden.jsonl']) {
    t.same(problemsOf(manifest(name)), [`snapshot: ${JSON.stringify(name)} is not a name beside the manifest (no folders, no "..", no URLs)`], name)
  }
  t.same(problemsOf(manifest('snap.jsonl', ['chg-0001.jsonl', '../../chg-0002.jsonl', 's3://other/chg.jsonl'])), [
    'changes[1]: "../../chg-0002.jsonl" is not a name beside the manifest (no folders, no "..", no URLs)',
    'changes[2]: "s3://other/chg.jsonl" is not a name beside the manifest (no folders, no "..", no URLs)'
  ])
  t.same(problemsOf(manifest('snap.txt', ['chg-0001.json'])), [
    'snapshot: "snap.txt" is not a snapshot\'s name (letters, digits, ., _, -, ending in .json, .jsonl or .ndjson)',
    'changes[0]: "chg-0001.json" is not a change file\'s name (letters, digits, ., _, -, ending in .jsonl)'
  ])
  t.same(problemsOf(manifest('snap.jsonl', ['chg-0001.jsonl', 'chg-0001.jsonl'])), ['changes: a change file is listed twice'])
})

t.test('a name longer than 200 characters is refused: a replica keeps each object as a file, under a longer temporary name first', async t => {
  const manifest = (snapshot: string, changes: string[] = []) => JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes })
  const long = (length: number, extension: string) => `${'a'.repeat(length - extension.length)}${extension}`
  t.same(problemsOf(manifest(long(201, '.jsonl'), ['chg-0001.jsonl', long(300, '.jsonl')])), [
    `snapshot: "${'a'.repeat(56)}... is 201 characters long; at most 200`,
    `changes[1]: "${'a'.repeat(56)}... is 300 characters long; at most 200`
  ])
  t.same(parseManifest(manifest(long(200, '.json'), [long(200, '.jsonl')])).snapshot.length, 200, '200 is still a name')
})

// src/sources/follow-manifest.ts: each object downloaded once, a step back with none, the last good state through bad manifests and outages.
/** A publisher's folder, served over HTTP: objects and the manifest written as `publish` writes them. */
async function fleet (t: Test, before?: (path: string) => Promise<void>) {
  const dir = await tempDir(t)
  const site = await serveDirectory(t, dir, before)
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
async function follower (t: Test, url: string, cacheDir: string, overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotUrl: new SecretUrl(url), snapshotCacheDir: cacheDir, stateDir: join(cacheDir, 'state'), snapshotPollSeconds: 3600, ...overrides } }))
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

/** Once the snapshot a join downloads behind its image is here and kept (ADR 042). */
const settled = async (app: FastifyInstance): Promise<void> => { await (app.snapshotSource as ManifestFollower).settled() }

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
  t.same(await cachedObjects(app), ['snap-1.jsonl'], 'nothing a refused manifest downloaded stays in the cache')
})

/** The objects in a follower's cache, hidden ones (temporary downloads) included. */
async function cachedObjects (app: FastifyInstance): Promise<string[]> {
  return (await readdir(join(app.snapshots.file, '..', 'objects'))).sort()
}

/** A change file of about `bytes`: its header holds the padding (unknown fields are accepted). */
const paddedChange = (id: string, bytes: number): string =>
  `${JSON.stringify({ changes: 'explore', version: 1, id, padding: 'x'.repeat(bytes) })}\n${JSON.stringify({ op: 'delete', language: 'en', pk: 2 })}\n`

t.test('a manifest whose new objects together pass twice SNAPSHOT_MAX_MB is refused before the one past it downloads; what it downloaded is removed', async t => {
  const { site, put, manifest, url } = await fleet(t)
  await put('snap-1.jsonl', toJsonLines(versioned(1)))
  await manifest('snap-1.jsonl')
  const app = await follower(t, url, await tempDir(t), { snapshotMaxMb: 1 })
  await app.snapshotSource!.checkNow()
  // Each under 1 MiB; together 2.25 MB, past the 2 MiB a manifest's update may download.
  await put('snap-2.jsonl', toJsonLines(versioned(2, { abstract: 'y'.repeat(33_000) })))
  await put('chg-0001.jsonl', paddedChange('chg-0001', 750_000))
  await put('chg-0002.jsonl', paddedChange('chg-0002', 750_000))
  await manifest('snap-2.jsonl', ['chg-0001.jsonl', 'chg-0002.jsonl'])
  site.reset()
  await app.snapshotSource!.checkNow()
  t.match(await lastError(app), /^chg-0002\.jsonl is \d+ bytes, more than the manifest's download budget allows \(\d+ of 2097152 bytes left: its new objects together, twice SNAPSHOT_MAX_MB at most\): not downloaded$/)
  t.ok(site.sent('snap-2.jsonl') > 700_000 && site.sent('chg-0001.jsonl') > 700_000, 'the two before it downloaded')
  t.same(await served(app), { count: 21, first: 'v1 item 1' }, 'the last good state served')
  t.same(await cachedObjects(app), ['snap-1.jsonl'], 'and nothing of the refused manifest left in the cache')

  // A chain served up to a bad change file: what the served state holds stays, the rest goes.
  await put('chg-bad.jsonl', '{"changes": "explore", "version": 1, "id": "chg-bad"}\nnot json\n')
  await manifest('snap-2.jsonl', ['chg-bad.jsonl'])
  await app.snapshotSource!.checkNow()
  t.match(await lastError(app), /do not load/)
  t.same(await served(app), { count: 22, first: 'v2 item 1' }, 'the new snapshot served, without the bad change')
  t.same(await cachedObjects(app), ['snap-1.jsonl', 'snap-2.jsonl'], 'the served snapshot kept, the bad change removed')
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

/** A fleet whose manifest names snap-1.jsonl and the image `publish` makes of it (`image` changed as given). */
async function fleetWithImage (
  t: Test, image: (made: ManifestImage) => ManifestImage = made => made, from = versioned(1), before?: (path: string) => Promise<void>
) {
  const fleetOf = await fleet(t, before)
  const published = await publishWithImage(t, fleetOf, 'snap-1.jsonl', versioned(1), image, from)
  return { ...fleetOf, ...published }
}

/** `doc` published as `name` with the image `publish` makes (of `from`, `doc` unless given), its entry changed by `image`. */
async function publishWithImage (
  t: Test, fleetOf: Awaited<ReturnType<typeof fleet>>, name: string, doc: SnapshotDoc,
  image: (made: ManifestImage) => ManifestImage = made => made, from = doc
) {
  await fleetOf.put(name, toJsonLines(doc))
  const scratch = await tempDir(t)
  await writeFile(join(scratch, 'made.jsonl'), toJsonLines(from))
  const model = await loadSnapshotFile(join(scratch, 'made.jsonl'))
  const { file, image: made } = await writeImageFile(model, scratch)
  model.memory.retire()
  await copyFile(file, join(fleetOf.dir, basename(file)))
  const named = image(made)
  await fleetOf.put('manifest.json', JSON.stringify({ manifest: 'explore', version: 1, snapshot: name, changes: [], image: named }))
  return { image: named, imageBytes: (await stat(file)).size }
}

/** An origin that holds back the answer to `path` until released: `requested` once it is asked for. */
function holding (path: string): { before: (asked: string) => Promise<void>, requested: Promise<void>, release: () => void } {
  let release = (): void => {}
  let requested = (): void => {}
  const released = new Promise<void>(resolve => { release = resolve })
  return {
    requested: new Promise<void>(resolve => { requested = resolve }),
    release,
    before: async asked => {
      if (asked !== path) return
      requested()
      await released
    }
  }
}

const images = async (app: FastifyInstance): Promise<{ imageMs: number | null, read: number }> => {
  const status = (await app.inject('/-/status')).json()
  return { imageMs: status.snapshot.imageMs, read: status.reloads.images.read }
}

t.test('a manifest naming an image of this release: a replica that joins reads it instead of a parse, and serves the same bytes; a restart too', async t => {
  const { site, url, image, imageBytes, put, manifest, change } = await fleetWithImage(t)
  const cacheDir = await tempDir(t)
  const app = await follower(t, url, cacheDir)
  await app.snapshotSource!.checkNow()
  t.match(await images(app), { imageMs: Number, read: 1 }, 'read from the image')
  t.equal(site.sent(image.name), imageBytes, 'downloaded once, whole')

  // The same fleet without the image: a replica that parses.
  const plain = await fleet(t)
  await plain.put('snap-1.jsonl', toJsonLines(versioned(1)))
  await plain.manifest('snap-1.jsonl')
  const parsed = await follower(t, plain.url, await tempDir(t))
  await parsed.snapshotSource!.checkNow()
  t.match(await images(parsed), { imageMs: null, read: 0 })
  const pages = ['/en/api/internal/explore/?limit=5', '/en/api/internal/explore/?companies=1&limit=3&offset=2', '/en/api/internal/explore/?companies=0,2&offset=19', '/fr/api/internal/explore/']
  const same = async (what: string): Promise<void> => {
    for (const page of pages) {
      const [a, b] = await Promise.all([app.inject(page), parsed.inject(page)])
      t.same([a.statusCode, a.headers.etag, a.body], [b.statusCode, b.headers.etag, b.body], `${what}: ${page}`)
    }
  }
  await same('loaded')
  const text = change('chg-0001', [{ op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [2], { translated_title: 'changed 1' }) }, { op: 'delete', language: 'en', pk: 3 }])
  // The image gone from the shelf (a disk mended): a change to the snapshot served does not download it again.
  const shelved = join(cacheDir, 'state', 'images', `${(await app.inject('/-/status')).json().snapshot.version as string}.image`)
  await rename(shelved, `${shelved}.aside`)
  for (const fleetOf of [{ put, manifest }, plain]) {
    await fleetOf.put('chg-0001.jsonl', text)
    await fleetOf.manifest('snap-1.jsonl', ['chg-0001.jsonl'], fleetOf === plain ? undefined : JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-1.jsonl', changes: ['chg-0001.jsonl'], image }))
  }
  await app.snapshotSource!.checkNow()
  await parsed.snapshotSource!.checkNow()
  await same('derived by a change file')
  t.equal(site.sent(image.name), imageBytes, 'the image not downloaded again for a change file')
  await rename(`${shelved}.aside`, shelved)
  const record = JSON.parse(await readFile(`${app.snapshots.file}.source.json`, 'utf8'))
  t.same(record.digests, { 'snap-1.jsonl': (await app.inject('/-/status')).json().snapshot.version.split('+')[0] }, 'the cache records the snapshot\'s digest, taken as it downloaded')
  await app.close()

  site.reset()
  const restarted = await follower(t, url, cacheDir)
  await restarted.snapshotSource.start(restarted.snapshotVersions)
  t.match(await images(restarted), { imageMs: Number, read: 1 }, 'a restart reads the image kept in STATE_DIR')
  await restarted.snapshotSource!.checkNow()
  t.equal(site.sent(image.name), 0, 'with nothing downloaded')
  t.same(await served(restarted), { count: 20, first: 'changed 1' })
})

t.test('an image a replica cannot use is not used, and the snapshot is parsed: another fingerprint\'s, another format, another snapshot\'s, one that does not download, one that is not what the manifest says', async t => {
  // What, the entry as published, whether the image is downloaded, the snapshot it is made of, how often it is read.
  const cases: Array<[string, (made: ManifestImage) => ManifestImage, boolean, ReturnType<typeof versioned>?, number?]> = [
    ['another fingerprint\'s', made => ({ ...made, fingerprint: 'renders-otherwise' }), false],
    ['another format', made => ({ ...made, format: IMAGE_FORMAT + 1 }), false],
    ['one that is not there', made => ({ ...made, name: 'gone.image' }), false],
    ['one described otherwise', made => ({ url: made.name, format: made.format, by: made.by }) as unknown as ManifestImage, false],
    ['one whose SHA-256 is not the manifest\'s', made => ({ ...made, digest: 'f'.repeat(64) }), true],
    ['one longer than the manifest says', made => ({ ...made, bytes: made.bytes + 1 }), true],
    ['one of another snapshot than the manifest says', made => ({ ...made, snapshot: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA' }), true],
    // Served from it until the snapshot downloads: the snapshot is what the manifest publishes.
    ['one of another snapshot, said to be this one\'s', made => made, true, versioned(2), 1]
  ]
  for (const [what, image, downloaded, from, read = 0] of cases) {
    const { site, url, image: named, imageBytes } = await fleetWithImage(t, image, from)
    const cacheDir = await tempDir(t)
    const app = await follower(t, url, cacheDir)
    await app.snapshotSource!.checkNow()
    await settled(app)
    t.same(await served(app), { count: 21, first: 'v1 item 1' }, `${what}: the snapshot served`)
    t.match(await images(app), { imageMs: null, read }, `${what}: parsed`)
    t.equal((await app.inject('/-/status')).json().source.lastError, null, `${what}: no error: the image is a shortcut`)
    t.equal(site.sent(named.name), downloaded ? imageBytes : 0, `${what}: ${downloaded ? 'downloaded' : 'not downloaded'}`)
    const own = `${(await app.inject('/-/status')).json().snapshot.version as string}.image`
    await app.close()
    t.same((await readdir(join(cacheDir, 'state', 'images'))).filter(name => name !== own), [], `${what}: nothing kept but the image this replica made of its parse`)
  }
})

t.test('a manifest refused for memory after its snapshot and image downloaded leaves neither in the cache nor on the shelf', async t => {
  const { site, url, image, imageBytes } = await fleetWithImage(t)
  const cacheDir = await tempDir(t)
  // Every estimate a hundredfold: nothing fits 64 MB.
  const app = await follower(t, url, cacheDir, { memoryLimitMb: 64, memoryEstimateScale: 100 })
  await app.snapshotSource!.checkNow()
  t.match(await lastError(app), /do not load, still serving the last good state \(.*needs ~[\d,]+ MB at its peak/)
  t.equal(site.sent(image.name), imageBytes, 'the image was downloaded')
  await app.snapshots.images!.idle()
  t.same(await cachedObjects(app), [], 'the snapshot removed')
  t.same(await readdir(join(cacheDir, 'state', 'images')), [], 'the image removed')
})

/** A replica joining a fleet with an image, its check under way, the origin holding back the snapshot's answer. */
async function joining (t: Test) {
  const origin = holding('/snap-1.jsonl')
  t.teardown(origin.release)
  const fleetOf = await fleetWithImage(t, undefined, undefined, origin.before)
  const cacheDir = await tempDir(t)
  const app = await follower(t, fleetOf.url, cacheDir)
  const checked = app.snapshotSource!.checkNow()
  await origin.requested
  return { origin, fleetOf, cacheDir, app, checked }
}

t.test('a replica that joins serves from the image before the snapshot has downloaded, then keeps the snapshot: a rollback to it works', async t => {
  const { origin, fleetOf, cacheDir, app, checked } = await joining(t)
  t.equal((await app.inject('/-/readyz')).statusCode, 200, 'ready while the snapshot is still on its way')
  t.same(await served(app), { count: 21, first: 'v1 item 1' })
  t.match(await images(app), { imageMs: Number, read: 1 }, 'served from the image')
  t.same(app.snapshotVersions.state().kept, [], 'not kept yet: its snapshot is not here')
  origin.release()
  await checked
  await settled(app)
  const version = (await app.inject('/-/status')).json().snapshot.version as string
  t.same(app.snapshotVersions.state().kept.map(kept => kept.version), [version], 'kept once the snapshot arrived')
  t.equal(fleetOf.site.sent('snap-1.jsonl'), Buffer.byteLength(toJsonLines(versioned(1))), 'downloaded once, after')

  await publishWithImage(t, fleetOf, 'snap-2.jsonl', versioned(2))
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 22, first: 'v2 item 1' })
  // Its image gone: the rollback reads the snapshot kept.
  await rm(join(cacheDir, 'state', 'images', `${version}.image`))
  await app.snapshotVersions!.rollback()
  t.same(await served(app), { count: 21, first: 'v1 item 1' }, 'rolled back to the version joined from the image')
  t.match(await images(app), { imageMs: null }, 'from its kept snapshot')
})

t.test('while a joined replica downloads its snapshot, a change published is served at its check; the version kept is the chain', async t => {
  const { origin, fleetOf, app, checked } = await joining(t)
  await checked
  const { image } = JSON.parse(await readFile(join(fleetOf.dir, 'manifest.json'), 'utf8')) as { image: ManifestImage }
  await fleetOf.put('chg-0001.jsonl', fleetOf.change('chg-0001', [{ op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [2], { translated_title: 'changed 1' }) }]))
  await fleetOf.put('manifest.json', JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-1.jsonl', changes: ['chg-0001.jsonl'], image }))
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 21, first: 'changed 1' }, 'the change served, the snapshot still on its way')
  t.equal(fleetOf.site.sent('snap-1.jsonl'), 0, 'not downloaded yet')
  origin.release()
  await settled(app)
  t.same(await served(app), { count: 21, first: 'changed 1' })
  const version = (await app.inject('/-/status')).json().snapshot.version as string
  t.match(version, /\+/, 'a version derived by the change')
  t.same(app.snapshotVersions.state().kept.map(kept => kept.version), [version], 'kept with its snapshot, the change applied')
  t.equal(fleetOf.site.sent('snap-1.jsonl'), Buffer.byteLength(toJsonLines(versioned(1))), 'downloaded once')
})

t.test('while a joined replica downloads its snapshot, another snapshot published stops that download', async t => {
  const { fleetOf, app, checked } = await joining(t)
  await checked
  await publishWithImage(t, fleetOf, 'snap-2.jsonl', versioned(2))
  await app.snapshotSource!.checkNow()
  t.same(await served(app), { count: 22, first: 'v2 item 1' }, 'the new snapshot served from its image')
  // Held back by the origin until released: it ends only because it is stopped.
  await settled(app)
  t.same(await cachedObjects(app), ['snap-2.jsonl'], 'the first snapshot never written, the new one kept')
  const version = (await app.inject('/-/status')).json().snapshot.version as string
  t.same(app.snapshotVersions.state().kept.map(kept => kept.version), [version], 'the new version kept with its snapshot')
})

t.test('a rollback while a snapshot downloads behind its image stands: nothing is served over the pin, and the checks stop', async t => {
  const origin = holding('/snap-2.jsonl')
  t.teardown(origin.release)
  const fleetOf = await fleet(t, origin.before)
  await fleetOf.put('snap-1.jsonl', toJsonLines(versioned(1)))
  await fleetOf.manifest('snap-1.jsonl')
  const app = await follower(t, fleetOf.url, await tempDir(t))
  await app.snapshotSource!.checkNow()
  await publishWithImage(t, fleetOf, 'snap-2.jsonl', versioned(2))
  await app.snapshotSource!.checkNow()
  await origin.requested
  t.same(await served(app), { count: 22, first: 'v2 item 1' }, 'v2 served from its image')
  await app.snapshotVersions!.rollback()
  origin.release()
  // Looped for ever before: each check that found the file here asked for another.
  await settled(app)
  t.same(await served(app), { count: 21, first: 'v1 item 1' }, 'the pin stands')
  await app.snapshotVersions!.unpin()
  t.same(await served(app), { count: 22, first: 'v2 item 1' }, 'unpin serves the newest')
  t.equal(app.snapshotVersions.state().kept.length, 2, 'and keeps it, its snapshot here')
})

t.test('a replica stopped before its snapshot arrived starts again from the image it kept, and then fetches the snapshot', async t => {
  const { origin, fleetOf, cacheDir, app: first, checked } = await joining(t)
  await first.close()
  await checked
  origin.release()
  fleetOf.site.reset()

  const restarted = await follower(t, fleetOf.url, cacheDir)
  await restarted.snapshotSource.start(restarted.snapshotVersions)
  t.same(await served(restarted), { count: 21, first: 'v1 item 1' }, 'served from the kept image before any check')
  t.match(await images(restarted), { read: 1 })
  await restarted.snapshotSource!.checkNow()
  await settled(restarted)
  t.same([...fleetOf.site.bytes.keys()], ['/snap-1.jsonl'], 'the snapshot alone downloaded: not the image again')
  t.equal(restarted.snapshotVersions.state().kept.length, 1, 'and the version kept')
})
