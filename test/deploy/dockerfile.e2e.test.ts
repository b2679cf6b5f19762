// deploy/Dockerfile's HEALTHCHECK command run here, as the image runs it, against real servers (processes
// started, hence the end-to-end suite); deploy-kit.test.ts checks the rest of the file in the default suite.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { buildTestApp, childEnv, freePort, tempDir } from '../helpers.js'
import { execForm, readStages, type Stage } from './dockerfile-instructions.js'
import { ROOT } from './deploy-rules.js'
import { SecretUrl } from '../../src/secret-url.js'

const runtime = readStages(await readFile(join(ROOT, 'deploy', 'Dockerfile'), 'utf8')).at(-1) as Stage
const HEALTHCHECK = runtime.instructions.filter(instruction => instruction.keyword === 'HEALTHCHECK').at(-1)?.args ?? ''

/** Runs the image's HEALTHCHECK command here, with the given environment: its exit code. */
async function healthcheck (env: Record<string, string>): Promise<number> {
  const check = /^(?:--\S+\s+)*CMD\s+(.*)$/s.exec(HEALTHCHECK)
  const command = execForm(check?.[1] ?? '')
  if (command === null || command[0] !== 'node') throw new Error('HEALTHCHECK is not an exec form running node')
  // These settings, none of this process's (tap's NODE_OPTIONS, a PORT of its own).
  const settings = { NODE_OPTIONS: '', PORT: '', OPS_PORT: '', ...env }
  return await new Promise(resolve => {
    execFile(process.execPath, command.slice(1), { env: childEnv(settings), timeout: 10_000 }, error => {
      resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : -1)
    })
  })
}

t.test('HEALTHCHECK, run: healthy once the snapshot is served, asked on OPS_PORT when it is set', async t => {
  const app = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = String((app.server.address() as { port: number }).port)
  t.equal(await healthcheck({ PORT: port }), 0, 'a replica serving its snapshot is healthy')
  t.equal(await healthcheck({ PORT: String(await freePort()) }), 1, 'nothing listening: unhealthy')

  const split = await buildTestApp(t, undefined, { opsPort: 0, opsHost: '127.0.0.1' })
  await split.listen({ port: 0, host: '127.0.0.1' })
  const opsPort = String((await split.ops!.listen()).port)
  const apiPort = String((split.server.address() as { port: number }).port)
  t.equal(await healthcheck({ PORT: apiPort, OPS_PORT: opsPort }), 0, 'with OPS_PORT: asked there')
  t.equal(await healthcheck({ PORT: apiPort }), 1, 'PORT alone has no /-/ endpoints then (the check must follow OPS_PORT)')

  // Listening, no snapshot yet: its source (nothing listens there) cannot be had. Alive, not ready.
  const loading = await buildApp(loadConfig({
    overrides: { logLevel: 'silent', snapshotUrl: new SecretUrl(`http://127.0.0.1:${await freePort()}/snapshot.json`), snapshotCacheDir: await tempDir(t) }
  }))
  t.teardown(() => loading.close())
  await loading.listen({ port: 0, host: '127.0.0.1' })
  t.equal(await healthcheck({ PORT: String((loading.server.address() as { port: number }).port) }), 1, 'not ready: not healthy')
})
