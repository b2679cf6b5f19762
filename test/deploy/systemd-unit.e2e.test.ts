// deploy/explore-replica.service: systemd's own check where systemd-analyze is installed, and the unit's
// keys held to the service's rules (signals, reload, hardening, a writable SNAPSHOT_CACHE_DIR and STATE_DIR)
// and its Environment= to every deploy file's (deploy-rules.ts: settings the service knows, the defaults a
// client sees, the operator's endpoints on loopback, the same ports).
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { tempDir } from '../helpers.js'
import { checkSettings, OPERATOR_PORT, ROOT } from './deploy-rules.js'

const UNIT = join(ROOT, 'deploy', 'explore-replica.service')
const text = await readFile(UNIT, 'utf8')
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find(path => existsSync(path))

/** Section → key → every value given, in order (systemd keys may repeat: Environment=). */
function readUnit (unit: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>()
  let section: Map<string, string[]> | undefined
  for (const line of unit.split('\n').map(l => l.trim())) {
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const header = /^\[(.+)\]$/.exec(line)
    if (header !== null) {
      section = new Map()
      sections.set(header[1] as string, section)
      continue
    }
    const eq = line.indexOf('=')
    if (section === undefined || eq < 0) throw new Error(`not a key in a section: ${line}`)
    const key = line.slice(0, eq).trim()
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1).trim()])
  }
  return sections
}

/** systemd-analyze verify on a copy of the unit: its exit code and what it said (a bad key only warns). */
async function verify (unit: string, dir: string): Promise<{ code: number, output: string }> {
  const file = join(dir, 'explore-replica.service')
  await writeFile(file, unit)
  return await new Promise(resolve => {
    execFile(ANALYZE as string, ['verify', file], { env: { ...process.env, SYSTEMD_LOG_COLOR: '0' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, output: `${stdout}${stderr}`.trim() })
    })
  })
}

const service = readUnit(text).get('Service') ?? new Map<string, string[]>()
const one = (key: string): string | undefined => service.get(key)?.at(-1)

t.test('systemd-analyze verify: no error, no warning', { skip: ANALYZE === undefined ? 'systemd-analyze is not installed (Debian: apt-get install systemd); the unit\'s keys are checked below' : false }, async t => {
  const dir = await tempDir(t)
  // verify checks that ExecStart's program exists: where Node is not /usr/bin/node, this machine's.
  const unit = existsSync('/usr/bin/node') ? text : text.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `)
  t.same(await verify(unit, dir), { code: 0, output: '' })
  const misspelt = await verify(unit.replace('ProtectSystem=strict', 'ProtectSytem=strict'), dir)
  t.match(misspelt.output, /Unknown key 'ProtectSytem'/, 'a misspelt key is reported')
})

t.test('signals: node itself started, SIGTERM to stop within the grace period, SIGHUP to reload', async t => {
  t.match(one('ExecStart'), /^\/\S*node dist\/server\.js(\s|$)/, 'node dist/server.js: no npm between systemd and the signals')
  t.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID')
  t.equal(one('KillSignal'), 'SIGTERM')
  t.equal(one('Restart'), 'on-failure')
  const config = loadConfig({ env: environment() })
  t.ok(Number(one('TimeoutStopSec')) * 1000 > config.shutdownGraceMs, `TimeoutStopSec=${one('TimeoutStopSec') ?? '?'} outlasts SHUTDOWN_GRACE_MS=${config.shutdownGraceMs}`)
})

t.test('a user of its own, no privileges, the file system read-only but for the cache directory', async t => {
  t.ok(one('DynamicUser') === 'yes' || (one('User') ?? 'root') !== 'root', 'DynamicUser=yes or a User= that is not root')
  t.equal(one('NoNewPrivileges'), 'yes')
  t.equal(one('ProtectSystem'), 'strict')
  const cacheDirectory = one('CacheDirectory') ?? one('StateDirectory')
  t.ok(cacheDirectory !== undefined, 'CacheDirectory= (or StateDirectory=): a directory systemd makes writable for it')
  const root = one('CacheDirectory') !== undefined ? '/var/cache' : '/var/lib'
  const config = loadConfig({ env: environment() })
  t.equal(config.snapshotCacheDir, `${root}/${cacheDirectory ?? '?'}`, 'SNAPSHOT_CACHE_DIR is that directory')
  t.ok(config.stateDir.startsWith(`${config.snapshotCacheDir}/`), `STATE_DIR ${config.stateDir} in it: the kept versions are written there too`)
  t.equal(one('MemoryDenyWriteExecute'), undefined, 'no MemoryDenyWriteExecute: V8\'s JIT needs it off')
})

t.test('Environment=: settings the service knows, its defaults kept, the operator\'s endpoints on loopback', async t => {
  // Nothing in the unit puts a proxy in front: TRUST_PROXY belongs in the environment file of a machine that has one.
  const config = checkSettings(t, {
    where: 'deploy/explore-replica.service',
    settings: environment(),
    sources: [{ where: 'deploy/explore-replica.service', text }],
    proxyInFront: false,
    podNetwork: false
  })
  t.equal(config?.opsPort, OPERATOR_PORT, `OPS_PORT=${OPERATOR_PORT}`)
  t.equal(config?.opsHost, '127.0.0.1', 'OPS_HOST=127.0.0.1: the console, /-/status and metrics on this machine only')
  // The operator's URLs the unit's comments give use its operator's port.
  for (const [, port] of text.matchAll(/^#.*http:\/\/[^/\s:]+:(\d+)\/-\//gm)) t.equal(Number(port), config?.opsPort, `a comment's /-/ URL on OPS_PORT (${port ?? '?'})`)
})

/** The Environment= assignments, later ones winning (systemd splits on spaces; these carry no quotes). */
function environment (): Record<string, string> {
  const env: Record<string, string> = {}
  for (const line of service.get('Environment') ?? []) {
    for (const word of line.split(/\s+/)) {
      const eq = word.indexOf('=')
      if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1)
    }
  }
  return env
}
