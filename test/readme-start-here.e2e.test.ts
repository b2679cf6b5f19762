// README's three "Start here" blocks, run as written, line by line, in a fresh copy of this checkout: a line
// that serves (npm start, node dist/server.js, explore-replica serve, or one ending in &) is started and
// waited for until its /-/readyz answers; every other line must exit 0. Ports 3000 and 9100 become free
// ones, so that the test runs beside anything else on the machine.
import t from 'tap'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cp, readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { childEnv, freePort, tempDir } from './helpers.js'

const ROOT = join(import.meta.dirname, '..')
// What a clone does not have: what a build, an install or a test run makes.
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'coverage', '.tap', '.scratch', join('bench', '.data'), join('bench', 'results')])
// A line ending in `&` (a comment may follow), or one that starts a server in the foreground.
const BACKGROUND = /\s&\s*(#.*)?$/
const SERVES = /(^|[\s;&])(npm start|node dist\/server\.js|explore-replica serve)\b/
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
    blocks.push({ title: heading[1] as string, lines: commands(block.join('\n').replace(/\\\n\s*/g, ' ').split('\n')) })
  }
  return blocks
}

/** A line without its comment: from a `#` after white space, outside quotes. */
function withoutComment (line: string): string {
  let quote: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (quote !== null) {
      if (c === quote) quote = null
    } else if (c === '\'' || c === '"') {
      quote = c
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) {
      return line.slice(0, i).trimEnd()
    }
  }
  return line.trimEnd()
}

/** Shell commands, one a line, comments dropped; a here-document stays with the line that opens it. */
function commands (lines: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < lines.length; i++) {
    const line = withoutComment(lines[i] as string)
    if (line.trim() === '') continue
    const heredoc = /<<-?\s*'?([A-Za-z_]+)'?/.exec(line)
    if (heredoc === null) {
      out.push(line)
      continue
    }
    const body: string[] = [line]
    while (i + 1 < lines.length && body.at(-1) !== heredoc[1]) body.push(lines[++i] as string)
    out.push(body.join('\n'))
  }
  return out
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

async function someReady (ports: number[]): Promise<boolean> {
  for (const port of ports) if (await ready(port)) return true
  return false
}

/** Starts a serving line in its own process group; resolves once the API's or the operator's port is ready. */
async function serve (line: string, cwd: string, ports: Ports): Promise<ChildProcess> {
  const waiting: number[] = []
  for (const port of [ports.api, ports.ops]) if (port !== 0 && !await ready(port)) waiting.push(port)
  // In the foreground of a shell of its own group: the group is what stop() ends.
  const child = spawn('bash', ['-c', line.replace(BACKGROUND, '')], { cwd, env: environment(ports), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', chunk => { output += chunk })
  child.stderr?.on('data', chunk => { output += chunk })
  // Ready once a port that did not answer before the line answers: an earlier server may hold the other.
  const deadline = Date.now() + LINE_WAIT_MS
  while (!(await someReady(waiting))) {
    if (child.exitCode !== null) throw new Error(`\`${line}\` exited ${child.exitCode} before it was ready:\n${output}`)
    if (Date.now() > deadline) throw new Error(`\`${line}\` not ready within ${LINE_WAIT_MS / 1000} s:\n${output}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  return child
}

/** Stops the line's whole process group (npm start's node, not only npm), and waits until none of it is left. */
async function stop (child: ChildProcess): Promise<void> {
  const group = -(child.pid as number)
  const alive = (): boolean => { try { process.kill(group, 0); return true } catch { return false } }
  try { process.kill(group, 'SIGTERM') } catch {}
  const deadline = Date.now() + 30_000
  while (alive() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  if (alive()) process.kill(group, 'SIGKILL')
  // Its pipes too: a grandchild holding them would keep this test's process open.
  child.stdout?.destroy()
  child.stderr?.destroy()
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
      // Each port found free just before its first use, not before npm ci: another file's server may take it meanwhile.
      const ports = { api: 0, ops: 0 }
      const servers: ChildProcess[] = []
      t.teardown(async () => { for (const server of servers) await stop(server) })
      for (const written of block.lines) {
        if (ports.api === 0 && (SERVES.test(written) || BACKGROUND.test(written) || /\b3000\b/.test(written))) ports.api = await freePort()
        if (ports.ops === 0 && /\b9100\b/.test(written)) ports.ops = await freePort()
        const line = withPorts(written, ports)
        const started = Date.now()
        // Each line's time in its message: where a slow run spent it.
        const took = (): string => `${((Date.now() - started) / 1000).toFixed(1)} s`
        if (SERVES.test(line) || BACKGROUND.test(line)) {
          servers.push(await serve(line, clone, ports))
          t.pass(`serves (${took()}): ${written.split('\n')[0] as string}`)
        } else {
          await run(line, clone, ports)
          t.pass(`exit 0 (${took()}): ${written.split('\n')[0] as string}`)
        }
      }
    })
  }
})
