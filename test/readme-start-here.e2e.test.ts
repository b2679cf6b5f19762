// README's three "Start here" blocks, run as written, line by line, in a fresh copy of this checkout: a line
// that serves (npm start, node dist/server.js, explore-replica serve, or one ending in &) is started and
// waited for until its /-/readyz answers; every other line must exit 0. Ports 3000 and 9100 become free
// ones, so that the test runs beside anything else on the machine.
import t from 'tap'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { cp, readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { childEnv, freePort, tempDir } from './helpers.js'

const ROOT = join(import.meta.dirname, '..')
// What a clone does not have: what a build, an install or a test run makes.
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'coverage', '.tap', '.scratch', join('bench', '.data'), join('bench', 'results')])
const SERVES = /(^|[\s;&])(npm start|node dist\/server\.js|explore-replica serve)\b|&\s*$/
const LINE_WAIT_MS = 5 * 60_000

// npm ci and a build in a fresh copy: minutes on a busy 2-core machine.
t.setTimeout(20 * 60_000)

interface StartHere { title: string, lines: string[] }

/** Each `## Start here: …` heading's first ```sh block, as shell lines (continuations joined, comments and blanks dropped). */
function startHereBlocks (readme: string): StartHere[] {
  const blocks: StartHere[] = []
  const lines = readme.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## Start here: (.+)$/.exec(lines[i] as string)
    if (heading === null) continue
    let j = i + 1
    while (j < lines.length && !(lines[j] as string).startsWith('```sh') && !(lines[j] as string).startsWith('## ')) j++
    const block: string[] = []
    for (j++; j < lines.length && !(lines[j] as string).startsWith('```'); j++) block.push(lines[j] as string)
    const joined = block.join('\n').replace(/\\\n\s*/g, ' ').split('\n')
    blocks.push({ title: heading[1] as string, lines: joined.filter(line => line.trim() !== '' && !line.trim().startsWith('#')) })
  }
  return blocks
}

interface Ports { api: number, ops: number }

function withPorts (line: string, ports: Ports): string {
  return line.replace(/\b3000\b/g, String(ports.api)).replace(/\b9100\b/g, String(ports.ops))
}

/** Only what the README's lines set, and PORT: the default port, 3000 as written, is a free one here too. */
function environment (ports: Ports): NodeJS.ProcessEnv {
  const env = childEnv({ LOG_PRETTY: 'false', PORT: String(ports.api) })
  for (const name of ['SNAPSHOT_PATH', 'SNAPSHOT_URL', 'OPS_PORT', 'OPS_TOKEN', 'WORKERS', 'CHANGES_DIR', 'STATE_DIR', 'NODE_OPTIONS']) delete env[name]
  return env
}

function run (line: string, cwd: string, ports: Ports): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', line], { cwd, env: environment(ports), timeout: LINE_WAIT_MS, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`\`${line}\` failed (${error.message}):\n${stdout}${stderr}`))
      else resolve(stdout)
    })
  })
}

async function ready (port: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/-/readyz`).catch(() => null)
  await response?.body?.cancel()
  return response?.status === 200
}

/** Starts a serving line in its own process group; resolves once the API's or the operator's port is ready. */
async function serve (line: string, cwd: string, ports: Ports): Promise<ChildProcess> {
  const child = spawn('bash', ['-c', line.replace(/&\s*$/, '')], { cwd, env: environment(ports), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', chunk => { output += chunk })
  child.stderr?.on('data', chunk => { output += chunk })
  const deadline = Date.now() + LINE_WAIT_MS
  while (!(await ready(ports.ops) || await ready(ports.api))) {
    if (child.exitCode !== null) throw new Error(`\`${line}\` exited ${child.exitCode} before it was ready:\n${output}`)
    if (Date.now() > deadline) throw new Error(`\`${line}\` not ready within ${LINE_WAIT_MS / 1000} s:\n${output}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  return child
}

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  // The whole group: npm start's node, not only the shell and npm above it.
  try { process.kill(-(child.pid as number), 'SIGTERM') } catch {}
  await exited
}

const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
const blocks = startHereBlocks(readme)

t.test('README has three "Start here" blocks, each with commands', async t => {
  t.equal(blocks.length, 3, blocks.map(block => block.title).join('; '))
  for (const block of blocks) t.ok(block.lines.length > 0, `${block.title}: has commands`)
})

t.test('each "Start here" block works as written in a fresh copy of the checkout', async t => {
  const work = await tempDir(t)
  const clone = join(work, 'explore-replica')
  const copied = (source: string): boolean => {
    const path = relative(ROOT, source)
    return ![...NOT_COPIED].some(left => path === left || path.startsWith(`${left}${sep}`))
  }
  await cp(ROOT, clone, { recursive: true, filter: copied })
  for (const block of blocks) {
    await t.test(block.title, async t => {
      const ports = { api: await freePort(), ops: await freePort() }
      const servers: ChildProcess[] = []
      t.teardown(async () => { for (const server of servers) await stop(server) })
      for (const written of block.lines) {
        const line = withPorts(written, ports)
        if (SERVES.test(line)) {
          servers.push(await serve(line, clone, ports))
          t.pass(`serves: ${written}`)
        } else {
          await run(line, clone, ports)
          t.pass(`exit 0: ${written}`)
        }
      }
    })
  }
})
