// `explore-replica versions|rollback|pin|unpin --ops-url URL` as a process, against a replica listening in
// this test: what it prints and its exit code for each answer (OPS_TOKEN's rules included).
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { BUILT_CLI as MAIN, childEnv, freePort, reloadFile, tempDir, versioned } from '../helpers.js'

const TOKEN = 'a-token-for-the-tests-0123456789'

function run (args: string[], env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    const base = childEnv(env)
    if (!('OPS_TOKEN' in env)) delete base.OPS_TOKEN
    execFile(process.execPath, [MAIN, ...args], { env: base }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })
}

async function replica (t: Test, overrides: Partial<Config> = {}) {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(versioned(1)))
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: join(dir, 'state'), watch: false, opsPort: 0, opsToken: TOKEN, ...overrides } }))
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const ops = `http://127.0.0.1:${(await app.ops!.listen()).port}`
  const api = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  await app.snapshots.start()
  // Kept before the file is replaced: a copy made after would not be the version loaded.
  await app.snapshotVersions!.kept.idle()
  await writeFile(join(dir, 'next.json'), JSON.stringify(versioned(2)))
  await rename(join(dir, 'next.json'), file)
  await reloadFile(app)
  await app.snapshotVersions!.kept.idle()
  return { app, ops, api }
}

t.test('versions, rollback, pin and unpin: what they print, exit 0', async t => {
  const { app, ops } = await replica(t)
  const [newer, older] = app.snapshotVersions!.kept.list().map(record => record.version)
  const listed = await run(['versions', '--ops-url', ops])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, `served: ${newer} (generated_at ${versioned(2).generated_at})\npinned: no (following the source)\nkept versions, newest first:\n  * ${newer}`)
  const rolled = await run(['rollback', '--ops-url', ops], { OPS_TOKEN: TOKEN })
  t.equal(rolled.code, 0, rolled.stderr)
  t.match(rolled.stdout, `served: ${older}`)
  t.match(rolled.stdout, `pinned: ${older} since`)
  const json = await run(['pin', newer!, '--ops-url', ops, '--json'], { OPS_TOKEN: TOKEN })
  t.equal(json.code, 0, json.stderr)
  t.match(JSON.parse(json.stdout), { served: { version: newer }, pin: { version: newer, from: older } })
  const unpinned = await run(['unpin', '--ops-url', ops], { OPS_TOKEN: TOKEN })
  t.equal(unpinned.code, 0, unpinned.stderr)
  t.match(unpinned.stdout, 'pinned: no (following the source)')
})

t.test('refusals: a clear message and an exit code for each', async t => {
  const { ops, api } = await replica(t)
  const noToken = await run(['rollback', '--ops-url', ops])
  t.equal(noToken.code, 3)
  t.match(noToken.stderr, /not allowed \(401: Authentication credentials were not provided\.\) OPS_TOKEN is not set in this shell/)
  const wrong = await run(['rollback', '--ops-url', ops], { OPS_TOKEN: 'not-the-token-at-all' })
  t.equal(wrong.code, 3)
  t.match(wrong.stderr, /not allowed \(401: Invalid token\.\) OPS_TOKEN is not the replica's token/)
  const unknown = await run(['pin', 'no-such-version', '--ops-url', ops], { OPS_TOKEN: TOKEN })
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /refused \(404\): Version "no-such-version" is not kept here/)
  const publicPort = await run(['rollback', '--ops-url', api], { OPS_TOKEN: TOKEN })
  t.equal(publicPort.code, 4)
  t.match(publicPort.stderr, /has no \/-\/rollback \(404\): --ops-url must be the replica's operator listener/)
  const refused = await run(['versions', '--ops-url', `http://127.0.0.1:${await freePort()}`])
  t.equal(refused.code, 4)
  t.match(refused.stderr, /cannot reach the replica at http:\/\/127\.0\.0\.1:\d+ \(connection refused\)/)
  const usage = await run(['pin', '--ops-url', ops])
  t.equal(usage.code, 2)
  t.match(usage.stderr, /pin needs one VERSION/)
  t.equal((await run(['versions'])).code, 2, 'no --ops-url')
})

t.test('a replica started without OPS_TOKEN: 403, exit 3', async t => {
  const { ops } = await replica(t, { opsToken: null })
  const off = await run(['unpin', '--ops-url', ops], { OPS_TOKEN: TOKEN })
  t.equal(off.code, 3)
  t.match(off.stderr, /not allowed \(403: Operator actions are off: set OPS_TOKEN\.\) The replica was started without OPS_TOKEN/)
})

t.test('an --ops-url with a user and password, or a query, is never printed with them', async t => {
  const { ops } = await replica(t)
  const withSecrets = await run(['versions', '--ops-url', `${ops.replace('//', '//reader:S3cret@')}/?sig=S3cret`])
  t.equal(withSecrets.code, 4, withSecrets.stderr)
  t.match(withSecrets.stderr, /cannot reach the replica at http:\/\/127\.0\.0\.1:\d+ \(/)
  t.notMatch(withSecrets.stdout + withSecrets.stderr, /S3cret|reader/)
  const notUrl = await run(['versions', '--ops-url', 'reader:S3cret@ops host/?sig=S3cret'])
  t.equal(notUrl.code, 2)
  t.notMatch(notUrl.stdout + notUrl.stderr, /S3cret|reader/, notUrl.stderr)
})
