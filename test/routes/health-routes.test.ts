import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { buildTestApp, smallSnapshot } from '../helpers.js'

t.test('healthz: the process answers', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject('/-/healthz')
  t.equal(res.statusCode, 200)
  t.same(JSON.parse(res.body), { status: 'ok' })
})

t.test('readyz: ready while the last reload did not fail; 503 with the reason when it did', async t => {
  const app = await buildTestApp(t)
  t.same(JSON.parse((await app.inject('/-/readyz')).body), { status: 'ready' })
  await writeFile(app.snapshots.file, '{"languages": {}}')
  t.equal(await app.snapshots.reload(), 'failed')
  const unready = await app.inject('/-/readyz')
  t.equal(unready.statusCode, 503)
  t.same(JSON.parse(unready.body), { status: 'unready', reason: 'the last reload of the snapshot failed: languages: must name at least one language' })
  await app.snapshots.reload()
  t.match(JSON.parse((await app.inject('/-/readyz')).body), { reason: /^the last 2 reloads of the snapshot failed/ })
  await writeFile(app.snapshots.file, JSON.stringify(smallSnapshot()))
  t.equal(await app.snapshots.reload(), 'loaded')
  t.equal((await app.inject('/-/readyz')).statusCode, 200, 'ready again once a good file is loaded')
  t.equal((await app.inject('/-/healthz')).statusCode, 200, 'alive throughout')
})
