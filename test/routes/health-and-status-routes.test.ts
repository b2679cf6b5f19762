// What the replica says of its own state: GET /-/healthz, /-/readyz and /-/status.
import t, { type Test } from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { currentStatus } from '../../src/routes/status-route.js'
import type { MemoryGuard } from '../../src/snapshot/memory-budget.js'
import { buildTestApp, EXPLORE, smallSnapshot, tempDir, testStateDir, toJsonLines, reloadFile } from '../helpers.js'

// src/routes/health-routes.ts: alive at once; ready while a snapshot is served, even a stale one, and not before the first.
t.test('healthz: the process answers', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject('/-/healthz')
  t.equal(res.statusCode, 200)
  t.same(JSON.parse(res.body), { status: 'ok' })
})

t.test('readyz: ready while a snapshot is served, also while newer files fail', async t => {
  const app = await buildTestApp(t)
  t.same(JSON.parse((await app.inject('/-/readyz')).body), { status: 'ready' })
  await writeFile(app.snapshots.file, '{"languages": {}}')
  t.equal(await reloadFile(app), 'failed')
  const stale = await app.inject('/-/readyz')
  t.equal(stale.statusCode, 200, 'a bad file must not take the replica out of its load balancer')
  t.same(JSON.parse(stale.body), { status: 'ready', reason: 'serving the last good snapshot: the last reload failed: snapshot.json: languages: must name at least one language' })
  const status = JSON.parse((await app.inject('/-/status')).body)
  t.match(status.reloads, { failedInARow: 1, staleSince: status.reloads.lastFailure.at })
  // Saved again (the same bad bytes): another failure. Unwritten, the file would not be read again.
  await writeFile(app.snapshots.file, '{"languages": {}}')
  await reloadFile(app)
  t.match(JSON.parse((await app.inject('/-/readyz')).body), { status: 'ready', reason: /^serving the last good snapshot: the last 2 reloads failed/ })
  t.equal(JSON.parse((await app.inject('/-/status')).body).reloads.staleSince, status.reloads.staleSince, 'stale since the first failure in the row')
  await writeFile(app.snapshots.file, JSON.stringify(smallSnapshot()))
  t.equal(await reloadFile(app), 'loaded')
  t.same(JSON.parse((await app.inject('/-/readyz')).body), { status: 'ready' }, 'no reason once a good file is served')
  t.equal(JSON.parse((await app.inject('/-/status')).body).reloads.staleSince, null)
})

/**
 * The app over a good snapshot whose first load waits, with no timer, until `open` is called: the memory guard
 * every load asks first holds it (a named pipe did this once; pipes are refused now, never opened).
 */
async function appWithHeldLoad (t: Test): Promise<{ app: FastifyInstance, file: string, open: () => void }> {
  const file = join(await tempDir(t), 'snapshot.jsonl')
  await writeFile(file, toJsonLines(smallSnapshot()))
  let open = (): void => {}
  const held = new Promise<void>(resolve => { open = resolve })
  const memory: MemoryGuard = {
    budget: { bytes: 2 ** 40, source: 'MEMORY_LIMIT_MB' },
    admit: async () => { await held; return { check () {} } }
  }
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: testStateDir(file), watch: false } }), { memory })
  return { app, file, open }
}

t.test('while the first snapshot loads: alive, not ready, pages 503, status says so', async t => {
  const { app, file, open } = await appWithHeldLoad(t)
  t.teardown(() => app.close())
  const started = app.snapshots.start()
  t.equal((await app.inject('/-/healthz')).statusCode, 200)
  const readyz = await app.inject('/-/readyz')
  t.equal(readyz.statusCode, 503)
  t.same(JSON.parse(readyz.body), { status: 'unready', reason: 'the first snapshot is still loading' })
  const page = await app.inject(EXPLORE)
  t.equal(page.statusCode, 503)
  t.same(JSON.parse(page.body), { detail: 'Service temporarily unavailable, try again later.' })
  t.match(JSON.parse((await app.inject('/-/status')).body), { path: file, snapshot: null })
  t.equal((await app.inject('/-/metrics')).statusCode, 200, 'metrics answer with no snapshot')
  open()
  await started
  t.equal((await app.inject('/-/readyz')).statusCode, 200)
  t.equal((await app.inject(EXPLORE)).statusCode, 200)
})

t.test('closing during a long first load does not wait for it', async t => {
  const { app, open } = await appWithHeldLoad(t)
  const started = app.snapshots.start()
  // The load waits to be let go, and close must not.
  await app.close()
  t.equal(app.snapshots.current(), null)
  // Let the load end, so that the test leaves nothing open.
  open()
  await started
  t.equal(app.snapshots.current(), null, 'a load that ends after the close is neither served nor kept')
})

t.test('a bad first snapshot: start() rejects with the report, and the app stays unready', async t => {
  const snapshotPath = join(await tempDir(t), 'missing.json')
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath, stateDir: testStateDir(snapshotPath), watch: false } }))
  t.teardown(() => app.close())
  await t.rejects(app.snapshots.start(), { code: 'SNAPSHOT_ERR_UNREADABLE', problems: ['the file does not exist'] })
  t.equal((await app.inject('/-/readyz')).statusCode, 503)
})

// src/routes/status-route.ts: GET /-/status, the refusal history it carries, and its one definition shared with the console.
t.test('/-/status: reloads.recentFailures lists refused files newest first, kept after a success', async t => {
  const app = await buildTestApp(t)
  const fresh = JSON.parse((await app.inject('/-/status')).body)
  t.same(Object.keys(fresh.reloads), ['succeeded', 'failed', 'failedInARow', 'lastFailure', 'staleSince', 'refusals', 'recentFailures', 'changeFiles', 'images'])
  t.same(fresh.reloads.recentFailures, [], 'nothing refused yet')

  await writeFile(app.snapshots.file, '{"languages": {}}')
  t.equal(await reloadFile(app), 'failed')
  await writeFile(app.snapshots.file, '{"languages": {"en": [{"pk": 1}]')
  t.equal(await reloadFile(app), 'failed')
  await writeFile(app.snapshots.file, JSON.stringify(smallSnapshot()))
  t.equal(await reloadFile(app), 'loaded')

  const { reloads } = JSON.parse((await app.inject('/-/status')).body)
  t.equal(reloads.recentFailures.length, 2)
  const [newest, older] = reloads.recentFailures
  t.match(newest, { file: app.snapshots.file }, 'the truncated file, newest first')
  t.match(newest.problems.at(-1), /^snapshot\.json:1:\d+: not a snapshot document: the document ends /, 'its item\'s problems, then where it ends')
  t.same(older, { at: older.at, file: app.snapshots.file, reason: 'invalid', problems: ['snapshot.json: languages: must name at least one language'] })
  t.same(reloads.refusals, { invalid: 2, too_big: 0 }, 'both refused for their contents')
  t.ok(Date.parse(newest.at) >= Date.parse(older.at))
  t.same(reloads.lastFailure, { at: newest.at, problems: newest.problems }, 'lastFailure is as it was: the newest refusal')
  t.match(reloads, { failedInARow: 0, staleSince: null }, 'the history outlives the success')
})

t.test('/-/status: the package\'s version and Node\'s, first', async t => {
  const app = await buildTestApp(t)
  const { version } = JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
  const status = JSON.parse((await app.inject('/-/status')).body)
  t.same(Object.keys(status).slice(0, 3), ['version', 'node', 'path'])
  t.equal(status.version, version)
  t.equal(status.node, process.version)
  t.match(status.node, /^v\d+\.\d+\.\d+/)
})

t.test('the status object is built once: /-/status answers exactly what currentStatus gives the console', async t => {
  const app = await buildTestApp(t)
  await writeFile(app.snapshots.file, '{"languages": {}}')
  await reloadFile(app)
  t.same(JSON.parse((await app.inject('/-/status')).body), currentStatus(app))
})

t.test('the OpenAPI document describes recentFailures', async t => {
  const app = await buildTestApp(t)
  const doc = JSON.parse((await app.inject('/-/openapi.json')).body)
  const schema = doc.paths['/-/status'].get.responses['200'].content['application/json'].schema
  t.same(Object.keys(schema.properties.reloads.properties.recentFailures.items.properties), ['at', 'file', 'reason', 'problems'])
  t.match(schema.properties, { version: { type: 'string' }, node: { type: 'string' } }, 'and the versions')
  t.ok(schema.required.includes('version') && schema.required.includes('node'))
  t.notOk(doc.paths['/-/'], 'the console is a page, not an API operation')
})
