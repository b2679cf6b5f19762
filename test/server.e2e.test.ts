// The real entry point, as a process: what an operator sees at startup and shutdown.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BUILT_SERVER as SERVER, childEnv, smallSnapshot, watchOutput, writeSnapshot } from './helpers.js'

// A test that fails before its SIGTERM leaves its server running, and with it this file until tap's
// timeout: whatever still runs when the file's tests end is killed.
const started = new Set<ChildProcess>()
t.teardown(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

function start (args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [SERVER, ...args], {
    env: childEnv({ ...env, PORT: '0', LOG_LEVEL: env.LOG_LEVEL ?? 'info' }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  started.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', chunk => { stdout += chunk })
  child.stderr.on('data', chunk => { stderr += chunk })
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }))
  const watched = watchOutput(child)
  /** Resolves with the address once the server logs that it listens and that its snapshot is loaded. */
  const listening = Promise.all([watched.origin(), watched.logged(/"msg":"snapshot loaded"/)]).then(([origin]) => origin)
  // Tests of startup failures never wait for `listening`; its rejection is expected there.
  listening.catch(() => {})
  /** Resolves when the server has logged a line matching `pattern` after this call. */
  const logged = (pattern: RegExp) => watched.logged(pattern, 1, watched.text().length)
  /**
   * SIGTERM, then the exit. One not come within STOP_WAIT_MS is killed, and `hung` says what each thread was doing
   * and what the server logged: a CI run once waited 220 s here for an exit that never came.
   */
  const stop = async (): Promise<{ code: number | null, stdout: string, hung: string | null }> => {
    child.kill('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<null>(resolve => { timer = setTimeout(() => resolve(null), STOP_WAIT_MS) })
    const ended = await Promise.race([exited, late])
    clearTimeout(timer)
    if (ended !== null) return { ...ended, hung: null }
    const hung = `no exit ${STOP_WAIT_MS / 1000} s after SIGTERM; threads: ${await threadStates(child.pid as number)}\n` +
      watched.text().slice(-4000)
    child.kill('SIGKILL')
    return { ...(await exited), hung }
  }
  return { child, exited, listening, logged, printed: watched.logged, output: watched.text, stop }
}

/** Past the 10 s grace period, after which the server exits by itself. */
const STOP_WAIT_MS = 30_000

/** Each thread's name, state and kernel wait channel (Linux), e.g. `node S ep_poll`. */
async function threadStates (pid: number): Promise<string> {
  const task = `/proc/${pid}/task`
  try {
    const states = await Promise.all((await readdir(task)).map(async tid => {
      const stat = await readFile(join(task, tid, 'stat'), 'utf8')
      const wchan = await readFile(join(task, tid, 'wchan'), 'utf8').catch(() => '?')
      return `${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))} ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] as string} ${wchan}`
    }))
    return states.join('; ')
  } catch {
    return 'unknown here'
  }
}

t.test('serves the snapshot it is pointed at, and stops cleanly on SIGTERM', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const server = start(['--snapshot-path', file])
  const url = await server.listening
  const res = await fetch(`${url}/en/api/internal/explore/?limit=1`)
  t.equal(res.status, 200)
  t.equal(((await res.json()) as { count: number }).count, 25)
  const { code, stdout, hung } = await server.stop()
  t.equal(code, 0, hung ?? 'exit 0 on SIGTERM')
  t.match(stdout, /"msg":"snapshot loaded"/)
})

t.test('a bad snapshot at startup: exit 1 with the validation report, no stack trace', async t => {
  const file = await writeSnapshot(t, { languages: { en: [{ pk: 1 }], EN: [] } })
  const { code, stderr } = await start(['--snapshot-path', file]).exited
  t.equal(code, 1)
  t.match(stderr, `snapshot ${file} is invalid`)
  t.match(stderr, 'languages.EN: is not a language segment')
  t.notMatch(stderr, /\n\s+at /, 'no stack trace')
})

t.test('a missing snapshot at startup: exit 1, says so', async t => {
  const { code, stderr } = await start(['--snapshot-path', '/nonexistent/snapshot.json']).exited
  t.equal(code, 1)
  t.match(stderr, 'snapshot /nonexistent/snapshot.json cannot be read (1 problem):\n  the file does not exist')
})

t.test('a bad configuration value: exit 1 with the rule', async t => {
  const { code, stderr } = await start([], { MAX_LIMIT: 'lots' }).exited
  t.equal(code, 1)
  t.equal(stderr, 'configuration error: MAX_LIMIT="lots": must be a whole number from 1 to 1000000\nRun with --help for the options.\n')
})

t.test('README\'s placeholder token: exit 1, naming OPS_TOKEN and how to make a real one, the value not repeated', async t => {
  const server = start(['--ops-port', '0'], { OPS_TOKEN: 'replace-me-with-a-long-secret' })
  // Should it start anyway, it is stopped rather than left to tap's timeout.
  if (await Promise.race([server.listening.then(() => true, () => false), server.exited.then(() => false)])) server.child.kill('SIGKILL')
  const { code, stderr } = await server.exited
  t.equal(code, 1)
  t.match(stderr, /^configuration error: OPS_TOKEN=\(hidden\): is a placeholder, not a token: make one with `openssl rand -hex 32`/)
  t.notMatch(stderr, /replace-me/)
})

t.test('a bad trouble option (a demo server\'s): exit 1, naming the option and the rule', async t => {
  const bad: Array<[Record<string, string>, string]> = [
    [{ DELAY_MS: 'abc' }, 'DELAY_MS="abc": must be milliseconds (200), a range (100-400) or a median (~150), from 0 to 600000'],
    [{ FAIL_RATE: '2' }, 'FAIL_RATE="2": must be a number from 0 to 1 (0.2: one answer in five)'],
    [{ FAULT: 'boom' }, 'FAULT="boom": must be reset, truncate or dribble']
  ]
  const exits = await Promise.all(bad.map(async ([env]) => start([], env).exited))
  bad.forEach(([env, message], i) => {
    t.equal(exits[i]?.code, 1, JSON.stringify(env))
    t.equal(exits[i]?.stderr, `configuration error: ${message}\nRun with --help for the options.\n`)
  })
})

t.test('--help prints the options and exits 0', async t => {
  const { code, stdout } = await start(['--help']).exited
  t.equal(code, 0)
  t.match(stdout, /^Usage: explore-replica \[serve\] \[FILE\] \[options\] {3}\(or: node dist\/server.js \[FILE\] \[options\]\)/)
  t.match(stdout, 'SNAPSHOT_PATH')
})

t.test('SIGHUP reloads the snapshot, with the file watch off', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const server = start(['--snapshot-path', file, '--watch', 'false'])
  const url = await server.listening
  const { writeFile } = await import('node:fs/promises')
  await writeFile(file, JSON.stringify({ ...smallSnapshot(), generated_at: '2026-12-01T00:00:00Z', languages: { en: [] } }))
  const reloaded = server.logged(/"msg":"snapshot reloaded"/)
  server.child.kill('SIGHUP')
  await reloaded
  const res = await fetch(`${url}/-/status`)
  t.match(await res.json(), { snapshot: { generatedAt: '2026-12-01T00:00:00Z', items: { en: 0 } }, reloads: { succeeded: 1 } })
  const stopped = await server.stop()
  t.equal(stopped.code, 0, stopped.hung ?? 'exit 0 on SIGTERM')
})

t.test('the start-up log names the console\'s URL: on the operator\'s port when OPS_PORT is set', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const server = start(['--snapshot-path', file, '--ops-port', '0'])
  const api = await server.listening
  // Logged once both ports listen: in the chunk that says so, or a later one.
  const pattern = /"url":"(http:\/\/127\.0\.0\.1:(\d+)\/-\/)","msg":"console"/
  const consoleLine = await server.printed(pattern).then(() => pattern.exec(server.output()), () => null)
  t.ok(consoleLine, 'a "console" line with its URL')
  t.not(consoleLine?.[2], new URL(api).port, 'on the operator\'s port, not the API\'s')
  const health = await fetch(`${consoleLine?.[1] ?? ''}healthz`)
  t.equal(health.status, 200, 'the operator\'s pages answer there')
  t.equal((await fetch(`${api}/-/healthz`)).status, 404, 'and not on the API\'s port')
  const stopped = await server.stop()
  t.equal(stopped.code, 0, stopped.hung ?? 'exit 0 on SIGTERM')
})

t.test('a change file that is a symbolic link out of the changes directory: the log names it and why, and nothing of its target', async t => {
  const { mkdir, symlink, writeFile } = await import('node:fs/promises')
  const { tempDir } = await import('./helpers.js')
  const file = await writeSnapshot(t, smallSnapshot())
  const secret = join(await tempDir(t), 'secret.jsonl')
  await writeFile(secret, '{"changes": "explore", "version": 1, "id": "leaked-id"}\n{"op": "delete", "language": "en", "pk": 1}\nleakedline:x:0:0\n')
  await mkdir(`${file}.changes`)
  await symlink(secret, join(`${file}.changes`, '0001.jsonl'))
  const server = start(['--snapshot-path', file])
  const url = await server.listening
  await server.printed(/"msg":"change file reload failed/)
  t.match(server.output(), /"changes":"[^"]*0001\.jsonl".*a symbolic link out of the changes directory: a change file must be a regular file/)
  t.notMatch(server.output(), /leaked/, 'nothing of the target in the log')
  t.match(await (await fetch(`${url}/-/status`)).json(), { snapshot: { items: { en: 25 } }, reloads: { changeFiles: { applied: 0, refused: 1 } } })
  const stopped = await server.stop()
  t.equal(stopped.code, 0, stopped.hung ?? 'exit 0 on SIGTERM')
})

t.test('on an address other than loopback without OPS_PORT: the log says the operator\'s pages are not served, and PORT 404s them', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const server = start(['--snapshot-path', file, '--host', '0.0.0.0'])
  const api = await server.listening
  await server.printed(/"msg":"the operator's pages are not served: HOST is not a loopback address and OPS_PORT is unset/)
  t.notMatch(server.output(), /"msg":"console"/, 'no console URL that would not answer')
  t.equal((await fetch(`${api}/-/status`)).status, 404)
  t.equal((await fetch(`${api}/-/readyz`)).status, 200, 'the probes answer')
  const stopped = await server.stop()
  t.equal(stopped.code, 0, stopped.hung ?? 'exit 0 on SIGTERM')
})

t.test('an operator\'s action is logged with the socket\'s address: TRUST_PROXY\'s X-Forwarded-For names no one there', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const token = 'e3b0c44298fc1c149afbf4c8996fb924'
  const server = start(['--snapshot-path', file, '--ops-port', '0'], { OPS_TOKEN: token, TRUST_PROXY: 'true' })
  await server.listening
  const pattern = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/-\/","msg":"console"/
  await server.printed(pattern)
  const ops = (pattern.exec(server.output()) as RegExpExecArray)[1] as string
  const forwarded = { 'x-forwarded-for': '203.0.113.9' }
  t.equal((await fetch(`${ops}/-/unpin`, { method: 'POST', headers: { ...forwarded, authorization: 'Bearer not-the-token-at-all' } })).status, 401)
  await server.printed(/"msg":"operator action refused: no valid token"/)
  t.equal((await fetch(`${ops}/-/unpin`, { method: 'POST', headers: { ...forwarded, authorization: `Bearer ${token}` } })).status, 200)
  await server.printed(/"msg":"operator action: unpin/)
  const audit = server.output().split('\n').filter(line => line.includes('"msg":"operator action'))
  t.equal(audit.length, 2, audit.join('\n'))
  for (const line of audit) t.match(line, /"client":"(127\.0\.0\.1|::ffff:127\.0\.0\.1)"/, line)
  t.notMatch(server.output(), /203\.0\.113\.9/)
  const stopped = await server.stop()
  t.equal(stopped.code, 0, stopped.hung ?? 'exit 0 on SIGTERM')
})
