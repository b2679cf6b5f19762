// The operator's versions over real HTTP: GET /-/versions, and POST /-/rollback, /-/pin and
// /-/unpin on the operator's listener, with OPS_TOKEN's rules; a pin that survives a restart.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { EXPLORE, makeItem, tempDir, versioned, reloadFile } from '../helpers.js'

const TOKEN = 'a-token-for-the-tests-0123456789'

interface Ports { api: string, ops: string | null }

/** A replica of `dir/snapshot.json` with its state in `dir/state`, listening on both ports. */
async function replica (t: Test, dir: string, overrides: Partial<Config> = {}): Promise<{ app: FastifyInstance } & Ports> {
  const app = await buildApp(loadConfig({
    overrides: { logLevel: 'silent', snapshotPath: join(dir, 'snapshot.json'), stateDir: join(dir, 'state'), watch: false, opsPort: 0, opsToken: TOKEN, ...overrides }
  }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const api = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const ops = app.ops === null ? null : `http://127.0.0.1:${(await app.ops.listen()).port}`
  await app.snapshots.start()
  await app.snapshotVersions?.kept.idle()
  return { app, api, ops }
}

/** Saves `doc` over the snapshot (write-then-rename, as editors should) and has the replica load it. */
async function publish (app: FastifyInstance, dir: string, version: number): Promise<void> {
  await writeFile(join(dir, 'next.json'), JSON.stringify(versioned(version)))
  await rename(join(dir, 'next.json'), join(dir, 'snapshot.json'))
  await reloadFile(app)
  await app.snapshotVersions?.kept.idle()
}

async function post (url: string, init: { token?: string | null, body?: unknown } = {}): Promise<{ status: number, headers: Headers, body: any }> {
  const headers: Record<string, string> = {}
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(url, { method: 'POST', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) }
}

/** The pages a client reads, as bytes, with their ETags. */
async function pages (base: string): Promise<string[]> {
  const out: string[] = []
  for (const query of ['?limit=5', '?limit=5&offset=5', '?limit=100']) {
    const res = await fetch(`${base}${EXPLORE}${query}`)
    out.push(`${res.headers.get('etag') ?? ''}\n${await res.text()}`)
  }
  return out
}

t.test('rollback serves the previous kept version, byte for byte as first served, and pins it; unpin follows the file again', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  const { app, api, ops } = await replica(t, dir)
  const first = await pages(api)
  const v1 = app.snapshots.current()!.info.version
  await publish(app, dir, 2)
  const v2 = app.snapshots.current()!.info.version
  t.not(v1, v2)

  const listed = await (await fetch(`${ops}/-/versions`)).json() as any
  t.same(listed.served, { version: v2, generatedAt: versioned(2).generated_at, items: { en: 22 } })
  t.same(listed.kept.map((kept: any) => [kept.version, kept.served, kept.chain.changes]), [[v2, true, []], [v1, false, []]], 'both kept, newest first')
  t.equal(listed.kept[1].source, join(dir, 'snapshot.json'))
  t.same(listed.kept[1].items, { en: 21 })
  t.equal(listed.pin, null)

  const rolled = await post(`${ops}/-/rollback`)
  t.equal(rolled.status, 200)
  t.equal(rolled.body.served.version, v1, 'answered once the previous version is served')
  t.match(rolled.body.pin, { version: v1, from: v2 })
  t.same(await pages(api), first, 'the pages are those first served for it, ETags included')
  t.match((await (await fetch(`${ops}/-/status`)).json() as any).pin, { version: v1 })
  t.match(await (await fetch(`${ops}/-/metrics`)).text(), `explore_snapshot_pinned{version="${v1}"} 1`)

  const again = await post(`${ops}/-/rollback`)
  t.equal(again.status, 409, 'nothing older is kept')
  t.same(again.body, { detail: 'No kept version is older than the served one.' })

  // While pinned, a newer file is not loaded (SIGHUP or a watcher would call this path).
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(3)))
  const pinned = await post(`${ops}/-/pin`, { body: { version: v2 } })
  t.equal(pinned.status, 200)
  t.equal(pinned.body.served.version, v2, 'pin serves any kept version')
  t.equal(app.snapshots.current()!.info.version, v2)

  const unknown = await post(`${ops}/-/pin`, { body: { version: 'no-such-version' } })
  t.equal(unknown.status, 404)
  t.same(unknown.body, { detail: 'Version "no-such-version" is not kept here (GET /-/versions lists the kept ones).' })
  const noBody = await post(`${ops}/-/pin`)
  t.equal(noBody.status, 400)
  t.same(Object.keys(noBody.body), ['version'])

  const unpinned = await post(`${ops}/-/unpin`)
  t.equal(unpinned.status, 200)
  t.equal(unpinned.body.pin, null)
  t.equal(unpinned.body.served.generatedAt, versioned(3).generated_at, 'the newest file is loaded at once')
  t.equal(unpinned.body.kept.length, 3)
  t.notMatch(await (await fetch(`${ops}/-/metrics`)).text(), 'explore_snapshot_pinned{')
})

t.test('a pin survives a restart: the pinned version is served, not the newer file', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  const before = await replica(t, dir)
  const first = await pages(before.api)
  await publish(before.app, dir, 2)
  t.equal((await post(`${before.ops}/-/rollback`)).status, 200)
  await before.app.close()

  const after = await replica(t, dir)
  t.equal(after.app.snapshots.current()!.info.generatedAt, versioned(1).generated_at, 'the pinned version is served after the restart')
  // Another port: the links name it, and the ETags' second part (what the page depends on) with them.
  const samePort = (page: string, base: string) => page.replace(/-\w+"\n/, '"\n').replaceAll(base, 'BASE')
  t.same((await pages(after.api)).map(page => samePort(page, after.api)), first.map(page => samePort(page, before.api)), 'the same pages, the version in the ETags included')
  const listed = await (await fetch(`${after.ops}/-/versions`)).json() as any
  t.match(listed.pin, { version: listed.served.version })
  t.equal(listed.kept.length, 2)
  const unpinned = await post(`${after.ops}/-/unpin`)
  t.equal(unpinned.body.served.generatedAt, versioned(2).generated_at)
})

t.test('versions built by change files are kept with their change files: a rollback serves one byte for byte, a restart keeps it, unpin applies the newest', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  const changes = join(dir, 'snapshot.json.changes')
  await mkdir(changes)
  const { app, api, ops } = await replica(t, dir)
  const version = (): string => app.snapshots.current()!.info.version
  const change = async (id: string, lines: object[]): Promise<void> => {
    await writeFile(join(changes, `${id}.jsonl`), [{ changes: 'explore', version: 1, id }, ...lines].map(line => `${JSON.stringify(line)}\n`).join(''))
    await reloadFile(app)
    await app.snapshotVersions?.kept.idle()
  }
  const v0 = version()
  await change('c1', [{ op: 'upsert', language: 'en', ...makeItem(500, '2024-02-01', [0], { translated_title: 'new in c1' }) }, { op: 'delete', language: 'en', pk: 3 }])
  const v1 = version()
  t.equal(v1, `${v0}+c1`)
  const servedAtC1 = await pages(api)
  await change('c2', [{ op: 'upsert', language: 'en', ...makeItem(1, '2024-03-01', [0], { translated_title: 'moved in c2' }) }])
  const v2 = version()

  const listed = await (await fetch(`${ops}/-/versions`)).json() as any
  t.same(listed.kept.map((kept: any) => [kept.version, kept.chain.changes]), [
    [v2, ['change-0001.jsonl', 'change-0002.jsonl']],
    [v1, ['change-0001.jsonl']],
    [v0, []]
  ], 'each version with the change files it was served from, in order')
  const keptFile = (v: string, name: string): string => join(dir, 'state', 'versions', v, name)
  t.equal((await stat(keptFile(v1, 'snapshot.json'))).ino, (await stat(keptFile(v0, 'snapshot.json'))).ino, 'the snapshot kept once: a link to the kept snapshot version\'s file')
  t.not((await stat(keptFile(v1, 'change-0001.jsonl'))).ino, (await stat(join(changes, 'c1.jsonl'))).ino, 'an editor\'s change file is copied')

  // The editor's file changes after it was served; the kept version does not.
  await writeFile(join(changes, 'c1.jsonl'), 'not what was served\n')
  const rolled = await post(`${ops}/-/rollback`)
  t.equal(rolled.status, 200)
  t.equal(rolled.body.served.version, v1)
  t.same(await pages(api), servedAtC1, 'the pages are those first served for it, ETags included')

  // Saved while pinned (the watcher would notice it, not apply it: tested above for a snapshot).
  await writeFile(join(changes, 'c3.jsonl'), [{ changes: 'explore', version: 1, id: 'c3' }, { op: 'delete', language: 'en', pk: 500 }].map(line => `${JSON.stringify(line)}\n`).join(''))
  await app.close()

  await writeFile(join(changes, 'c1.jsonl'), (await readFile(keptFile(v1, 'change-0001.jsonl'), 'utf8')))
  const after = await replica(t, dir)
  t.equal(after.app.snapshots.current()!.info.version, v1, 'a restart serves the pinned version from its kept files, not the change files on disk')
  const samePort = (page: string, base: string): string => page.replace(/-\w+"\n/, '"\n').replaceAll(base, 'BASE')
  t.same((await pages(after.api)).map(page => samePort(page, after.api)), servedAtC1.map(page => samePort(page, api)), 'the same pages')
  const unpinned = await post(`${after.ops}/-/unpin`)
  t.equal(unpinned.body.served.version, `${v0}+c3`, 'unpinned: the snapshot and every change file on disk')
  t.same(unpinned.body.served.items, { en: 21 - 1 + 1 - 1 })
})

t.test('the actions need OPS_TOKEN and the bearer token, on the operator\'s port only', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  const { api, ops } = await replica(t, dir)
  const unknownPath = await fetch(`${api}/no-such-page/`)
  const notFound = await unknownPath.text()

  for (const action of ['/-/rollback', '/-/pin', '/-/unpin']) {
    const missing = await post(`${ops}${action}`, { token: null })
    t.equal(missing.status, 401, `${action}: no Authorization header`)
    t.equal(missing.headers.get('www-authenticate'), 'Bearer')
    t.same(missing.body, { detail: 'Authentication credentials were not provided.' })
    const wrong = await post(`${ops}${action}`, { token: TOKEN.replace(/.$/, 'X') })
    t.equal(wrong.status, 401, `${action}: a wrong token of the same length`)
    t.equal(wrong.headers.get('www-authenticate'), 'Bearer')
    t.same(wrong.body, { detail: 'Invalid token.' })
    const short = await post(`${ops}${action}`, { token: 'short' })
    t.equal(short.status, 401, `${action}: a token of another length`)
    const long = await post(`${ops}${action}`, { token: `${TOKEN}${TOKEN}` })
    t.equal(long.status, 401, `${action}: a longer one`)
    const basic = await fetch(`${ops}${action}`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } })
    t.equal(basic.status, 401, `${action}: another scheme`)
    await basic.arrayBuffer()

    const onPublic = await fetch(`${api}${action}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(onPublic.status, 404, `${action}: not on the public port, even with the token`)
    t.equal(await onPublic.text(), notFound, `${action}: the public port's 404 of any unknown path`)

    const get = await fetch(`${ops}${action}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(get.status, 404, `${action}: a GET is the 404 any /-/ route gives a method it does not take`)
    t.same(await get.json(), { detail: 'Not found.' })
  }
  const statusByPost = await fetch(`${ops}/-/status`, { method: 'POST' })
  t.equal(statusByPost.status, 404, 'as POST /-/status is')
  await statusByPost.arrayBuffer()
  const versionsOnPublic = await fetch(`${api}/-/versions`)
  t.equal(versionsOnPublic.status, 404, 'GET /-/versions is an operator\'s page: not on the public port')
  await versionsOnPublic.arrayBuffer()
})

t.test('without OPS_TOKEN the actions answer 403; without OPS_PORT they do not exist', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  const noToken = await replica(t, dir, { opsToken: null })
  for (const action of ['/-/rollback', '/-/pin', '/-/unpin']) {
    const refused = await post(`${noToken.ops}${action}`)
    t.equal(refused.status, 403, action)
    t.same(refused.body, { detail: 'Operator actions are off: set OPS_TOKEN.' })
  }
  await noToken.app.close()

  const samePort = await replica(t, dir, { opsPort: null })
  t.equal(samePort.ops, null)
  for (const action of ['/-/rollback', '/-/pin', '/-/unpin']) {
    const absent = await post(`${samePort.api}${action}`)
    t.equal(absent.status, 404, `${action}: no operator's listener, no action`)
    t.same(absent.body, { detail: 'Not found.' })
  }
  const listed = await fetch(`${samePort.api}/-/versions`)
  t.equal(listed.status, 200, 'GET /-/versions is there with the other /-/ pages')
  t.equal(((await listed.json()) as any).kept.length, 1)
})

t.test('while pinned, a file saved over the snapshot is noticed by the watcher and reported, not loaded', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  const { app, ops } = await replica(t, dir, { watch: true, reloadDebounceMs: 20 })
  const reloaded = once(app.snapshots, 'reloaded')
  await writeFile(join(dir, 'next.json'), JSON.stringify(versioned(2)))
  await rename(join(dir, 'next.json'), join(dir, 'snapshot.json'))
  t.same(await reloaded, ['loaded'], 'the watcher loads a new file')
  await app.snapshotVersions!.kept.idle()
  const rolled = await post(`${ops}/-/rollback`)
  t.equal(rolled.body.served.generatedAt, versioned(1).generated_at)
  const loads = ((await (await fetch(`${ops}/-/status`)).json()) as any).reloads.succeeded
  await writeFile(join(dir, 'next.json'), JSON.stringify(versioned(3)))
  await rename(join(dir, 'next.json'), join(dir, 'snapshot.json'))
  // The watcher's report reaches the status after its quiet time; each look is one more request.
  let status: any
  do status = await (await fetch(`${ops}/-/status`)).json()
  while (status.newest === null)
  t.match(status.newest, { source: join(dir, 'snapshot.json'), etag: null })
  t.equal(status.snapshot.generatedAt, versioned(1).generated_at, 'still the pinned version')
  t.equal(status.reloads.succeeded, loads, 'no load since the rollback\'s')
  t.match(await (await fetch(`${ops}/-/metrics`)).text(), /^explore_snapshot_newer_held_back 1$/m)
})

t.test('a STATE_DIR that cannot be made stops the start at once, naming it and what to do', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'snapshot.json'), JSON.stringify(versioned(1)))
  await writeFile(join(dir, 'not-a-directory'), '')
  // Under a file; and under /proc, where Node's own recursive mkdir never returns.
  for (const stateDir of [join(dir, 'not-a-directory', 'state'), '/proc/explore-replica-state']) {
    const config = loadConfig({ overrides: { logLevel: 'silent', snapshotPath: join(dir, 'snapshot.json'), watch: false, stateDir } })
    await t.rejects(buildApp(config), {
      name: 'StartError',
      message: `STATE_DIR=${stateDir}: cannot be used (${stateDir.startsWith('/proc') ? 'ENOENT' : 'ENOTDIR'}): set STATE_DIR to a directory this user can create and write`
    })
  }
})
