// deploy/explore-replica.service: the unit's keys held to the service's rules (signals, reload, hardening, a
// writable SNAPSHOT_CACHE_DIR and STATE_DIR, OPS_TOKEN from a root-only file the guide creates) and its
// Environment= to every deploy file's (deploy-rules.ts: settings the service knows, the defaults a client
// sees, the operator's endpoints on loopback, the same ports). systemd-unit.e2e.test.ts runs systemd-analyze.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { checkSettings, guideSection, OPERATOR_PORT, ROOT } from './deploy-rules.js'

const UNIT = join(ROOT, 'deploy', 'explore-replica.service')
const text = await readFile(UNIT, 'utf8')

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

const service = readUnit(text).get('Service') ?? new Map<string, string[]>()
const one = (key: string): string | undefined => service.get(key)?.at(-1)

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

t.test('OPS_TOKEN from a required EnvironmentFile= that deploying.md creates for root alone (mode 0600)', async t => {
  const guide = guideSection('deploying.md', 'systemd')
  const create = /sudo install (?:-D )?-m (\d+) -o root -g root \/dev\/null (\S+)/.exec(guide)
  const write = /"OPS_TOKEN=\$\(openssl rand -hex (\d+)\)" \| sudo tee (\S+)/.exec(guide)
  if (create === null || write === null) return t.fail('deploying.md#systemd creates the file (sudo install -m MODE -o root -g root /dev/null FILE) and writes OPS_TOKEN=$(openssl rand -hex N) to it (| sudo tee FILE)')
  const [, mode, file] = create as unknown as [string, string, string]
  t.equal(Number.parseInt(mode, 8) & 0o077, 0, `mode ${mode}: root alone reads it (systemd reads it before it drops to the DynamicUser)`)
  t.equal(write[2], file, `the token is written to ${file}, the file made so`)
  const token = randomBytes(Number(write[1])).toString('hex') // what openssl rand -hex makes
  t.equal(loadConfig({ env: { ...environment(), OPS_TOKEN: token } }).opsToken, token, `openssl rand -hex ${write[1] ?? '?'}: ${token.length} characters, a token the service takes (at least 16)`)
  // Without "-": a missing file stops the start, as a missing Secret does a pod, rather than 403 every action.
  t.ok(service.get('EnvironmentFile')?.includes(file), `EnvironmentFile=${file}, required`)
  t.notOk('OPS_TOKEN' in environment(), 'never in Environment=: a unit file is world-readable')
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
