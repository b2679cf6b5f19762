// The package as npx gets it: packed from a copy of this checkout (`npm pack` runs prepack, which builds
// dist/ afresh; a copy, because other tests run the checkout's dist/ meanwhile), installed from the tarball
// into an empty directory, and its `explore-replica` run from yet another: with no argument it serves the
// sample bundled in the package, with a FILE that file.
import t from 'tap'
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { cp, mkdir, readdir, symlink } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { childEnv, smallSnapshot, tempDir, writeSnapshot } from '../helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')
const MAX_TARBALL_BYTES = 400 * 1024
// Left out of the copy: what a build or a test run makes, and what npm would never pack anyway.
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'coverage', '.tap', '.scratch', join('bench', '.data'), join('bench', 'results')])

// Packing builds with tsc and installing fetches the dependencies: minutes on a busy 2-core machine.
t.setTimeout(10 * 60_000)

interface PackResult { filename: string, size: number, files: Array<{ path: string }> }

function run (command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: childEnv(), maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${error.message}\n${stderr}`))
      else resolve(stdout)
    })
  })
}

/** Starts the installed command in `cwd`; resolves once it has listened and loaded its snapshot. */
async function start (bin: string, args: string[], cwd: string): Promise<{ child: ChildProcessWithoutNullStreams, url: string, snapshot: string }> {
  // None of this process's snapshot settings: the command must find its snapshot on its own.
  const env = childEnv({ LOG_LEVEL: 'info', LOG_PRETTY: 'false' })
  for (const name of ['SNAPSHOT_PATH', 'SNAPSHOT_URL', 'PORT', 'OPS_PORT', 'WORKERS']) delete env[name]
  const child = spawn(bin, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stderr.on('data', chunk => { output += chunk })
  const started = await new Promise<{ url: string, snapshot: string }>((resolve, reject) => {
    child.stdout.on('data', chunk => {
      output += chunk
      const url = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[,"]/.exec(output)?.[1]
      const snapshot = /"snapshot":"([^"]+)"[^\n]*"msg":"snapshot loaded"/.exec(output)?.[1]
      if (url !== undefined && snapshot !== undefined) resolve({ url, snapshot })
    })
    child.once('exit', code => reject(new Error(`${bin} exited ${String(code)}: ${output}`)))
  })
  return { child, ...started }
}

async function stop (child: ChildProcessWithoutNullStreams): Promise<number | null> {
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const [code] = await exited as [number | null]
  return code
}

t.test('npm pack: what runs and nothing else, under 400 KB; installed, it serves the sample or a FILE from any directory', async t => {
  const work = await tempDir(t)
  const source = join(work, 'checkout')
  await cp(ROOT, source, { recursive: true, filter: path => !NOT_COPIED.has(relative(ROOT, path)) })
  // The checkout's dependencies, for prepack's build.
  await symlink(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir')

  const [pack] = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', work], source)) as PackResult[]
  if (pack === undefined) throw new Error('npm pack made no tarball')
  t.ok(pack.size < MAX_TARBALL_BYTES, `tarball ${pack.size} bytes < ${MAX_TARBALL_BYTES}`)
  const files = pack.files.map(file => file.path)
  for (const needed of ['package.json', 'README.md', 'LICENSE', 'dist/cli/main.js', 'dist/server.js', 'data/snapshot.json', 'schemas/snapshot.schema.json']) {
    t.ok(files.includes(needed), `${needed} packed`)
  }
  // Every module src/ compiles to, freshly built (prepack empties dist/ first: nothing stale, nothing missing).
  const compiled = (await readdir(join(ROOT, 'src'), { recursive: true })).filter(path => path.endsWith('.ts') && !path.endsWith('.d.ts'))
    .map(path => `dist/${path.split(sep).join('/').replace(/\.ts$/, '.js')}`)
  t.same(files.filter(path => path.startsWith('dist/')).sort(), compiled.sort(), 'dist/ holds exactly the compiled src/')
  t.same(files.filter(path => !/^(dist\/.+\.js|data\/snapshot\.json|schemas\/[^/]+\.schema\.json|package\.json|README\.md|LICENSE)$/.test(path)), [],
    'nothing else: no src/, test/, bench/, source maps or configuration')

  // An empty directory, the tarball installed as npx would: its dependencies resolved from the registry.
  const app = join(work, 'app')
  await mkdir(app)
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, pack.filename)], app)
  const bin = join(app, 'node_modules', '.bin', 'explore-replica')
  // Run from a third directory, with no data/ of its own.
  const elsewhere = join(work, 'elsewhere')
  await mkdir(elsewhere)

  const sample = await start(bin, ['--port', '0'], elsewhere)
  t.equal(sample.snapshot, join(app, 'node_modules', 'explore-replica', 'data', 'snapshot.json'), 'no argument: the sample bundled in the package')
  const ready = await fetch(`${sample.url}/-/readyz`)
  t.equal(ready.status, 200, '/-/readyz')
  t.same(await ready.json(), { status: 'ready' })
  const page = await fetch(`${sample.url}/en/api/internal/explore/?limit=1`)
  t.equal(page.status, 200)
  t.ok(((await page.json()) as { count: number }).count > 100, 'a page of the sample')
  t.equal(await stop(sample.child), 0, 'SIGTERM: exit 0')

  // A FILE, relative to the directory the command runs in.
  const file = await writeSnapshot(t, smallSnapshot())
  await cp(file, join(elsewhere, 'mine.json'))
  const mine = await start(bin, ['mine.json', '--port', '0'], elsewhere)
  t.equal(mine.snapshot, 'mine.json', 'FILE served')
  t.equal((await fetch(`${mine.url}/-/readyz`)).status, 200)
  const minePage = await fetch(`${mine.url}/en/api/internal/explore/?limit=1`)
  t.equal(((await minePage.json()) as { count: number }).count, 25, 'its items')
  t.equal(await stop(mine.child), 0)
})
