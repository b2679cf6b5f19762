// `npm start` in a copy of this checkout: it serves at once from an up-to-date build, builds first when a source
// is newer than the build, and one SIGTERM to npm's own process (as `kill <pid>` sends) stops the server.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cp, readdir, stat, symlink, utimes } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { childEnv, eventually, freePort, tempDir } from '../helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')

// A build in the copy: a minute at the most on a busy 2-core machine.
t.setTimeout(5 * 60_000)

const SOURCES = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json']

/** `path` and all in it, modified at `when`. */
async function touch (path: string, when: Date): Promise<void> {
  if ((await stat(path)).isDirectory()) {
    for (const name of await readdir(path)) await touch(join(path, name), when)
  }
  await utimes(path, when, when)
}

/**
 * The files `npm start` reads and the build (npm run test:e2e built it), the sources a minute old and the build
 * half a minute (a copy's own times are the copy's), and the modules.
 */
async function checkout (t: Test): Promise<string> {
  const dir = await tempDir(t)
  for (const name of [...SOURCES, 'scripts', 'data', 'dist']) await cp(join(ROOT, name), join(dir, name), { recursive: true })
  for (const name of SOURCES) await touch(join(dir, name), new Date(Date.now() - 60_000))
  await touch(join(dir, 'dist'), new Date(Date.now() - 30_000))
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

const refused = async (port: number): Promise<boolean> => await new Promise(resolve => {
  const socket = connect(port, '127.0.0.1')
  socket.on('connect', () => { socket.destroy(); resolve(false) })
  socket.on('error', () => { resolve(true) })
})

/** Runs `npm start` until it serves a page, then sends npm alone a SIGTERM; what it printed on stderr. */
async function startAndStop (dir: string): Promise<string> {
  const port = await freePort()
  const npm = spawn('npm', ['start'], { cwd: dir, env: childEnv({ PORT: String(port), LOG_LEVEL: 'warn' }), stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  npm.stderr.on('data', chunk => { stderr += String(chunk) })
  const exited = once(npm, 'exit')
  await eventually('npm start serving a page', async () => {
    const answer = await fetch(`http://127.0.0.1:${port}/en/api/internal/explore/?limit=1`).catch(() => null)
    return answer?.status === 200 ? true : undefined
  })
  npm.kill('SIGTERM')
  await exited
  await eventually('the server stopped by the SIGTERM npm passed on', async () => await refused(port) ? true : undefined)
  return stderr
}

t.test('an up-to-date build is served at once; a source newer than it is built first; npm\'s SIGTERM stops the server', async t => {
  const dir = await checkout(t)
  t.notMatch(await startAndStop(dir), /building/, 'nothing built: dist/ is newer than every source')
  // Edited after the build, and before now: the build that follows is newer than it.
  const edited = new Date(Date.now() - 10_000)
  await utimes(join(dir, 'src', 'version.ts'), edited, edited)
  t.match(await startAndStop(dir), /building \(a source is newer than dist\/\)/, 'built first')
  t.notMatch(await startAndStop(dir), /building/, 'and not again')
})
