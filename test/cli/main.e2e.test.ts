// `explore-replica` (src/cli/main.ts, as built: dist/cli/main.js) as a process: its subcommands, their help, bad usage, and `serve` as
// the default command.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { BUILT_CLI as MAIN, BUILT_SERVER, childEnv, smallSnapshot, tempDir, writeSnapshot } from '../helpers.js'

function run (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [MAIN, ...args], { env: childEnv() }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })
}

t.test('the build leaves the command executable: npx runs dist/cli/main.js itself, and tsc writes it 644', async t => {
  // The end-to-end suite builds dist/ before it runs (npm run test:e2e).
  const bin = MAIN
  t.equal((await stat(bin)).mode & 0o111, 0o111, 'executable by all')
  const version = await new Promise<string>((resolve, reject) => {
    execFile(bin, ['--version'], { env: childEnv() }, (error, stdout) => { if (error !== null) reject(error); else resolve(stdout) })
  })
  t.match(version, /^explore-replica \d+\.\d+\.\d+\n$/, 'run as a program, as npx and a global install do')
})

t.test('--help lists every subcommand; each subcommand has its own --help', async t => {
  const { code, stdout } = await run('--help')
  t.equal(code, 0)
  for (const command of ['serve', 'check', 'generate', 'convert', 'capture']) t.match(stdout, new RegExp(`^  ${command} `, 'm'), command)
  t.match((await run('serve', '--help')).stdout, /--snapshot-path \/ SNAPSHOT_PATH/, 'serve: the service\'s options')
  t.match((await run('check', '--help')).stdout, /^Usage: explore-replica check/)
  t.match((await run('generate', '--help')).stdout, /^Usage: explore-replica generate/)
  t.match((await run('convert', '--help')).stdout, /^Usage: explore-replica convert/)
  t.match((await run('capture', '--help')).stdout, /capture/)
})

t.test('--version and -v: the package\'s version, exit 0; the server entry too', async t => {
  const { version } = JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
  t.match(version, /^\d+\.\d+\.\d+/)
  for (const flag of ['--version', '-v']) t.same(await run(flag), { code: 0, stdout: `explore-replica ${version}\n`, stderr: '' }, flag)
  const server = await new Promise<{ code: number, stdout: string }>(resolve => {
    execFile(process.execPath, [BUILT_SERVER, '--version'], { env: childEnv() }, (error, stdout) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout })
    })
  })
  t.same(server, { code: 0, stdout: `explore-replica ${version}\n` }, 'node dist/server.js --version: the same, nothing served')
  t.match((await run('--help')).stdout, /^ {7}explore-replica --version /m, 'the help says so')
})

t.test('bad usage: exit 2 with what is wrong and where to look, no stack trace', async t => {
  const unknown = await run('serv')
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown command "serv"/)
  const badOption = await run('generate', '--items', 'many')
  t.equal(badOption.code, 2)
  t.match(badOption.stderr, /^explore-replica generate: --items must be a non-negative integer, got "many"\nRun explore-replica generate --help/)
  const unknownOption = await run('generate', '--colour', 'red')
  t.equal(unknownOption.code, 2)
  t.notMatch(unknownOption.stderr, /\n\s+at /, 'no stack trace')
  t.equal((await run('check')).code, 2, 'check without a file')
})

t.test('generate, then check: the same file, through one command line', async t => {
  const out = join(await tempDir(t), 'sample.jsonl')
  const generated = await run('generate', '--items', '40', '--out', out)
  t.equal(generated.code, 0, generated.stderr)
  const checked = await run('check', out)
  t.equal(checked.code, 0)
  t.match(checked.stdout, /sample\.jsonl: valid \(en: 40, es: 14, fr: 10 items/)
})

t.test('serve is the default: options alone start the server, which stops on SIGTERM', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const child = spawn(process.execPath, [MAIN, '--snapshot-path', file, '--port', '0', '--log-level', 'info'], {
    env: childEnv(), stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', chunk => {
      stdout += chunk
      const match = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[,"]/.exec(stdout)
      if (match !== null && stdout.includes('"msg":"snapshot loaded"')) resolve(match[1] as string)
    })
    child.once('exit', code => reject(new Error(`exited ${String(code)}: ${stdout}`)))
  })
  const page = await fetch(`${url}/en/api/internal/explore/?limit=1`)
  t.equal(page.status, 200)
  await page.arrayBuffer()
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
})

t.test('a FILE first is served, as --snapshot-path: relative to the working directory; a mistyped command is not a file', async t => {
  const dir = await tempDir(t)
  const { writeFile } = await import('node:fs/promises')
  await writeFile(join(dir, 'mine.json'), JSON.stringify(smallSnapshot()))
  const child = spawn(process.execPath, [MAIN, 'mine.json', '--port', '0', '--log-level', 'info'], {
    cwd: dir, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', chunk => {
      stdout += chunk
      const match = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)[,"]/.exec(stdout)
      if (match !== null && stdout.includes('"snapshot":"mine.json"')) resolve(match[1] as string)
    })
    child.once('exit', code => reject(new Error(`exited ${String(code)}: ${stdout}`)))
  })
  const page = await fetch(`${url}/en/api/internal/explore/?limit=1`)
  t.equal(((await page.json()) as { count: number }).count, 25, 'the FILE\'s items')
  child.kill('SIGTERM')
  t.equal((await once(child, 'exit'))[0], 0)

  const missing = await run('no-such-snapshot.jsonl', '--port', '0')
  t.equal(missing.code, 1, 'a FILE that cannot be read stops serve, exit 1')
  t.match(missing.stderr, /^snapshot no-such-snapshot\.jsonl cannot be read/)
  const twice = await run('a.json', '--snapshot-path', 'b.json')
  t.equal(twice.code, 1)
  t.match(twice.stderr, /FILE "a\.json" and --snapshot-path both name the snapshot/)
  const typo = await run('serv')
  t.equal(typo.code, 2, 'no file named serv, no path: still an unknown command')
})
