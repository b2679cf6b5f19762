// GET /-/status: the refusal history it carries, and its one definition shared with the console.
import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { currentStatus } from '../../src/routes/status-route.js'
import { buildTestApp, smallSnapshot, reloadFile } from '../helpers.js'

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
