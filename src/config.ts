// The configuration: overrides, then flags, then environment, then defaults; validated once. Nothing else reads env.
// Each option is declared once, in config/options.ts.
import { Value } from '@sinclair/typebox/value'
import { KindGuard } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { ConfigError } from './errors.js'
import { SecretUrl } from './secret-url.js'
import { ConfigSchema, OPTIONS, type Config } from './config/options.js'

export { BUNDLED_SNAPSHOT, OPTIONS, S3_ENVIRONMENT, type ChaosReplay, type Config, type FaultKind } from './config/options.js'
export { MAX_DELAY_MS, type DelaySpec } from './config/special-values.js'

export function changesDirOf (config: Pick<Config, 'changesDir' | 'snapshotPath'>): string {
  return config.changesDir ?? `${config.snapshotPath}.changes`
}

interface ConfigSources {
  env?: Record<string, string | undefined>
  argv?: readonly string[]
  /** Decides LOG_PRETTY=auto. */
  tty?: boolean
  /** For tests: win over everything. */
  overrides?: Partial<Config>
}

function readFlags (argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>()
  const file = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : undefined
  for (let i = file === undefined ? 0 : 1; i < argv.length; i++) {
    const arg = argv[i] as string
    const eq = arg.indexOf('=')
    const name = eq < 0 ? arg : arg.slice(0, eq)
    const option = OPTIONS.find(o => o.flag === name)
    // The name alone: a mistyped secret option's value is still a secret.
    if (option === undefined) throw new ConfigError(`unknown argument "${name}" (see --help)`)
    if (eq >= 0) {
      flags.set(name, arg.slice(eq + 1))
    } else if (KindGuard.IsBoolean(option.schema) &&
      (argv[i + 1] === undefined || (argv[i + 1] as string).startsWith('--'))) {
      flags.set(name, 'true')
    } else {
      if (argv[i + 1] === undefined) throw new ConfigError(`${name} needs a value`)
      flags.set(name, argv[++i] as string)
    }
  }
  if (file !== undefined) {
    if (flags.has('--snapshot-path')) {
      throw new ConfigError(`FILE "${file}" and --snapshot-path both name the snapshot: give one`)
    }
    flags.set('--snapshot-path', file)
  }
  return flags
}

/** XDG. */
function userCacheDir (env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CACHE_HOME
  // XDG ignores a relative path.
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME ?? homedir(), '.cache')
  return join(base, 'explore-replica')
}

/** In the shared default cache, one per source: one demo's pin never reaches another snapshot. */
function defaultStateDir (config: Record<string, unknown>, cacheDirGiven: boolean): string {
  const cacheDir = String(config.snapshotCacheDir)
  if (cacheDirGiven) return join(cacheDir, 'state')
  // As shown: a new password or signature keeps the state.
  const source = config.snapshotUrl instanceof SecretUrl
    ? config.snapshotUrl.shown
    : resolve(String(config.snapshotPath))
  return join(cacheDir, `state-${createHash('sha256').update(source).digest('hex').slice(0, 12)}`)
}

/** Credentials that would be dropped without a word, or two for one Authorization header. */
function checkSourceOptions (url: URL, headers: Readonly<Record<string, string>> | null): void {
  const names = Object.keys(headers ?? {}).map(name => name.toLowerCase())
  if (url.protocol === 's3:') {
    if (names.length > 0) {
      throw new ConfigError(
        'SNAPSHOT_HTTP_HEADERS is for an http(s):// SNAPSHOT_URL: an s3:// one is signed with the AWS settings (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE); unset SNAPSHOT_HTTP_HEADERS'
      )
    }
    if (url.username !== '' || url.password !== '') {
      throw new ConfigError(
        'SNAPSHOT_URL: an s3:// URL takes no user or password: it is signed with the AWS settings (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)'
      )
    }
    return
  }
  if ((url.username !== '' || url.password !== '') && names.includes('authorization')) {
    throw new ConfigError(
      'SNAPSHOT_URL has a user and password (sent as Basic authentication) and SNAPSHOT_HTTP_HEADERS an Authorization header: give the credentials in one of them'
    )
  }
}

export function loadConfig ({ env = {}, argv = [], tty = false, overrides = {} }: ConfigSources = {}): Config {
  const flags = readFlags(argv)
  const config: Record<string, unknown> = {}
  for (const option of OPTIONS) {
    if (option.key in overrides) {
      config[option.key] = overrides[option.key]
      continue
    }
    const fromFlag = flags.get(option.flag)
    const fromEnv = env[option.env]
    const [source, text] = fromFlag !== undefined
      ? [option.flag, fromFlag]
      : fromEnv !== undefined ? [option.env, fromEnv] : ['default', option.default]
    if (text === undefined) {
      config[option.key] = null
      continue
    }
    try {
      config[option.key] = option.auto !== undefined && text.trim().toLowerCase() === 'auto'
        ? option.auto({ tty, config })
        : option.parse(text)
    } catch (error) {
      throw new ConfigError(
        optionError(option, source === 'default' ? option.env : source, text, (error as Error).message)
      )
    }
  }
  config.snapshotCacheDir ??= userCacheDir(env)
  // deploy/ makes it writable, on the disk of the downloads it hard-links (ADR 025).
  config.stateDir ??= defaultStateDir(
    config,
    flags.has('--snapshot-cache-dir') || env.SNAPSHOT_CACHE_DIR !== undefined || 'snapshotCacheDir' in overrides
  )
  if (!Value.Check(ConfigSchema, config)) {
    // Only a test's override gets here.
    const first = Value.Errors(ConfigSchema, config).First()
    const option = OPTIONS.find(o => `/${o.key}` === first?.path)
    throw new ConfigError(option === undefined
      ? `invalid configuration at ${first?.path ?? '/'}: ${first?.message ?? 'unknown problem'}`
      : optionError(option, option.env, JSON.stringify(config[option.key]), 'is out of range'))
  }
  const checked = config as Config
  if (checked.opsPort !== null && checked.opsPort !== 0 && checked.opsPort === checked.port) {
    throw new ConfigError(
      `OPS_PORT=${checked.opsPort} is also PORT: the operator's pages need a port of their own (or leave OPS_PORT unset to serve them on PORT)`
    )
  }
  if (checked.snapshotUrl !== null) checkSourceOptions(checked.snapshotUrl.reveal(), checked.snapshotHttpHeaders)
  const faultRate = flags.get('--fault-rate') ?? env.FAULT_RATE
  if (checked.fault === null && faultRate !== undefined && !('faultRate' in overrides)) {
    throw new ConfigError(
      `${flags.has('--fault-rate') ? '--fault-rate' : 'FAULT_RATE'}=${JSON.stringify(faultRate)} needs FAULT: reset, truncate or dribble`
    )
  }
  return Object.freeze(checked)
}

function optionError (option: (typeof OPTIONS)[number], name: string, text: string, problem: string): string {
  const shown = option.secret === true
    ? '(hidden)'
    : JSON.stringify(option.shownValue?.(text) ?? text)
  return problem.startsWith(`must be ${option.rule}`)
    ? `${name}=${shown}: ${problem}`
    : `${name}=${shown}: ${problem}; ${option.env} must be ${option.rule}`
}

export function helpText (): string {
  const rows = OPTIONS.map(o => {
    const fallback = o.shown ?? o.default
    return `  ${`${o.flag} / ${o.env}`.padEnd(36)} ${o.description} Takes ${o.rule}.${fallback !== undefined ? ` Default: ${fallback}.` : ''}`
  })
  return [
    'Usage: explore-replica [serve] [FILE] [options]   (or: node dist/server.js [FILE] [options])',
    '',
    'Serves the explore listing API from the snapshot FILE (the same as --snapshot-path FILE), or without one',
    'the sample bundled with the package. Every option is a flag or an environment variable; a flag wins over',
    'the variable.',
    '',
    ...rows,
    '  --help'.padEnd(38) + ' Print this help and exit.',
    '  --version, -v'.padEnd(38) + ' Print the version and exit.',
    ''
  ].join('\n')
}
