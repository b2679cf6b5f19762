// The configuration: overrides, then flags, then environment, then defaults; validated once. Nothing else reads env.
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { createHash } from 'node:crypto'
import { availableParallelism, homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ConfigError, FAIL_STATUSES, type FailStatus } from './errors.js'
import { SecretUrl, shownUrl } from './secret-url.js'
import { loopbackName } from './loopback-name.js'

/** data/ is beside src/ and dist/. */
export const BUNDLED_SNAPSHOT = fileURLToPath(new URL('../data/snapshot.json', import.meta.url))

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A lognormal's tail is cut there too. */
export const MAX_DELAY_MS = 600_000
const DelayMs = Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })

const DelaySchema = Type.Union([
  Type.Object({ kind: Type.Literal('fixed'), ms: DelayMs }),
  Type.Object({ kind: Type.Literal('uniform'), min: DelayMs, max: DelayMs }),
  Type.Object({ kind: Type.Literal('lognormal'), median: Type.Integer({ minimum: 1, maximum: MAX_DELAY_MS }) })
])
export type DelaySpec = Static<typeof DelaySchema>

const FAULTS = ['reset', 'truncate', 'dribble'] as const
export type FaultKind = typeof FAULTS[number]
const Rate = Type.Number({ minimum: 0, maximum: 1 })
/** What a seed's draws follow: each request's own key and askings (ADR 041), or the order requests arrive in. */
const CHAOS_REPLAYS = ['request', 'order'] as const
export type ChaosReplay = typeof CHAOS_REPLAYS[number]

/** Read by the AWS SDK, not loadConfig; named for --help and deploy/'s tests. */
export const S3_ENVIRONMENT = [
  'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL'
] as const

const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  snapshotPath: Type.String({ minLength: 1 }),
  snapshotUrl: Type.Union([Type.Unsafe<SecretUrl>(Type.Object({ shown: Type.String({ minLength: 1 }) })), Type.Null()]),
  snapshotHttpHeaders: Type.Union([Type.Record(Type.String({ minLength: 1 }), Type.String()), Type.Null()]),
  changesDir: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  snapshotPollSeconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
  snapshotCacheDir: Type.String({ minLength: 1 }),
  snapshotMaxMb: Type.Integer({ minimum: 1, maximum: 1_048_576 }),
  s3ForcePathStyle: Type.Boolean(),
  stateDir: Type.String({ minLength: 1 }),
  statePruneDays: Type.Integer({ minimum: 0, maximum: 3650 }),
  keepVersions: Type.Integer({ minimum: 1, maximum: 100 }),
  opsToken: Type.Union([Type.String({ minLength: 16 }), Type.Null()]),
  workers: Type.Integer({ minimum: 1, maximum: 256 }),
  memoryLimitMb: Type.Union([Type.Integer({ minimum: 64, maximum: 16_777_216 }), Type.Null()]),
  memoryEstimateScale: Type.Number({ exclusiveMinimum: 0, maximum: 100 }),
  maxLimit: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  publicBaseUrl: Type.Union([Type.String(), Type.Null()]),
  trustProxy: Type.Boolean(),
  corsOrigin: Type.Union([
    Type.Literal('*'), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Literal(false)
  ]),
  logLevel: Type.Union(LOG_LEVELS.map(level => Type.Literal(level))),
  watch: Type.Boolean(),
  reloadDebounceMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
  allowedHosts: Type.Union([Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Null()]),
  cacheMaxAge: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  metrics: Type.Boolean(),
  docs: Type.Boolean(),
  console: Type.Boolean(),
  opsPort: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]),
  opsHost: Type.String({ minLength: 1 }),
  opsAllowedHosts: Type.Union([Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Null()]),
  exposeOpsPages: Type.Boolean(),
  requestLog: Type.Boolean(),
  logPretty: Type.Boolean(),
  shutdownGraceMs: Type.Integer({ minimum: 1, maximum: 600_000 }),
  requestTimeoutMs: Type.Integer({ minimum: 1, maximum: 600_000 }),
  maxUrlLength: Type.Integer({ minimum: 64, maximum: 65_536 }),
  pageCacheMb: Type.Integer({ minimum: 0, maximum: 65_536 }),
  fastPath: Type.Boolean(),
  delayMs: Type.Union([DelaySchema, Type.Null()]),
  failRate: Rate,
  failStatus: Type.Union(FAIL_STATUSES.map(status => Type.Literal(status))),
  fault: Type.Union([...FAULTS.map(kind => Type.Literal(kind)), Type.Null()]),
  faultRate: Rate,
  chaosSeed: Type.Union([Type.Integer({ minimum: 0, maximum: 0xffff_ffff }), Type.Null()]),
  chaos: Type.Boolean(),
  chaosReplay: Type.Union(CHAOS_REPLAYS.map(replay => Type.Literal(replay))),
  requestJournal: Type.Boolean(),
  requestJournalSize: Type.Integer({ minimum: 1, maximum: 100_000 })
}, { additionalProperties: false })

export type Config = Readonly<Static<typeof ConfigSchema>>

interface Option<K extends keyof Config> {
  key: K
  env: string
  /** `--` and `env` in kebab case. */
  flag: string
  /** undefined: unset (null). */
  default: string | undefined
  /** Where the real default depends on the machine. */
  shown?: string
  description: string
  /** Said by --help, the reference and every error about the option. */
  rule: string
  /** Never repeated in a message. */
  secret?: boolean
  /** Throws a message without the option name (added by the caller). */
  parse: (text: string) => Config[K]
}

const BOOLEAN_RULE = 'true or false (also 1/0, yes/no, on/off)'

function nonEmpty (text: string): string {
  if (text.trim() === '') throw new Error('must not be empty')
  return text.trim()
}

/** Unset when empty. */
function optional<T> (parse: (text: string) => T) {
  return (text: string): T | null => text.trim() === '' ? null : parse(text)
}

function integer (min: number, max: number) {
  return (text: string): number => {
    if (!/^[0-9]+$/.test(text.trim())) throw new Error(`must be a whole number from ${min} to ${max}`)
    const value = Number(text.trim())
    if (value < min || value > max) throw new Error(`must be a whole number from ${min} to ${max}`)
    return value
  }
}

function snapshotUrl (text: string): SecretUrl {
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    throw new Error('is not a URL')
  }
  if (!['http:', 'https:', 's3:'].includes(url.protocol)) {
    throw new Error(`${url.protocol} is not a scheme the service follows`)
  }
  if (!/\.(json|jsonl|ndjson)$/i.test(url.pathname)) {
    throw new Error('must name a .json, .jsonl or .ndjson object (the format follows the name)')
  }
  if (url.protocol === 's3:' && (url.hostname === '' || url.pathname.length <= 1)) {
    throw new Error('an S3 source is s3://bucket/key')
  }
  return new SecretUrl(url.href)
}

/** RFC 9110's token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Set by the replica's own requests or by HTTP's framing. */
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect',
  'accept-encoding', 'range', 'if-none-match', 'if-modified-since'
])

/** No message repeats a value, nor a name that is not one (it may be a value missing its colon): secrets. */
function httpHeaders (text: string): Record<string, string> | null {
  const value = text.trim()
  if (value === '') return null
  let pairs: Array<[string, unknown, string]>
  if (value.startsWith('{')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(value)
    } catch {
      throw new Error('is not a JSON object')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Error('is not a JSON object')
    }
    pairs = Object.entries(parsed).map(([name, v], i) => [name, v, `the JSON object's name ${i + 1}`])
  } else {
    pairs = value.split(/\r?\n/).flatMap((line, i): Array<[string, unknown, string]> => {
      if (line.trim() === '') return []
      const colon = line.indexOf(':')
      if (colon < 0) throw new Error(`line ${i + 1} is not \`Name: value\``)
      return [[line.slice(0, colon).trim(), line.slice(colon + 1).trim(), `the name on line ${i + 1}`]]
    })
  }
  const headers: Record<string, string> = {}
  const seen = new Set<string>()
  for (const [name, header, where] of pairs) {
    if (!HEADER_NAME.test(name)) {
      throw new Error(`${where} is not a header name (letters, digits and !#$%&'*+-.^_\`|~)`)
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new Error(`${name} is set by the replica or by HTTP itself: it cannot be given`)
    }
    if (seen.has(name.toLowerCase())) throw new Error(`${name} is given twice: give each header once`)
    seen.add(name.toLowerCase())
    if (typeof header !== 'string') throw new Error(`the value of ${name} must be a string`)
    if (/[\r\n]/.test(header)) throw new Error(`the value of ${name} must be one line (no CR or LF)`)
    if (!/^[\x20-\x7e\t]*$/.test(header)) {
      throw new Error(`the value of ${name} must be printable ASCII (percent- or base64-encode anything else)`)
    }
    if (header.trim() === '') throw new Error(`${name} has no value`)
    headers[name] = header.trim()
  }
  return headers
}

/** A placeholder's words and marks: no hex token holds one, a base64 one by a chance of about 1 in 10 million. */
const PLACEHOLDER = /replace|change|example|placeholder|secret|insert|your.?token|xxxxxx|[<>…`]|\$[({]/i

/** Copied from a guide, a token would be known to anyone who read it. */
function opsToken (text: string): string | null {
  const token = text.trim()
  if (token === '') return null
  if (token.length < 16) throw new Error('must be at least 16 characters')
  if (PLACEHOLDER.test(token) || /^(.)\1*$/s.test(token)) {
    throw new Error('is a placeholder, not a token: make one with `openssl rand -hex 32`')
  }
  return token
}

function workers (text: string): number {
  if (text.trim().toLowerCase() === 'auto') return Math.min(availableParallelism(), 256)
  if (!/^[0-9]+$/.test(text.trim()) || Number(text) < 1 || Number(text) > 256) {
    throw new Error('must be a whole number from 1 to 256, or auto')
  }
  return Number(text)
}

function boolean (text: string): boolean {
  const value = text.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(value)) return true
  if (['0', 'false', 'no', 'off', ''].includes(value)) return false
  throw new Error(`must be ${BOOLEAN_RULE}`)
}

/** `auto` is decided in loadConfig, which knows whether the log goes to a terminal. */
function logPretty (text: string): boolean {
  try {
    return boolean(text)
  } catch {
    throw new Error('must be auto, true or false')
  }
}

function baseUrl (text: string): string | null {
  const value = text.trim()
  if (value === '') return null
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error('must be an absolute http(s) URL such as https://news.example.com')
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' ||
      url.username !== '' || url.password !== '') {
    throw new Error('must be an absolute http(s) URL with no query, fragment or credentials')
  }
  // Links are built as base + /{lang}/api/…: keep a path prefix, drop the trailing slash.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`
}

function corsOrigin (text: string): Config['corsOrigin'] {
  const value = text.trim()
  if (value === '*') return '*'
  if (['', 'false', 'off', 'none'].includes(value.toLowerCase())) return false
  const origins = value.split(',').map(o => o.trim()).filter(o => o !== '')
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new Error(`"${origin}" is not an origin such as https://app.example.com`)
    }
  }
  return origins
}

function allowedHosts (text: string): string[] | null {
  const hosts = text.split(',').map(h => h.trim().toLowerCase()).filter(h => h !== '')
  if (hosts.length === 0) return null
  for (const host of hosts) {
    if (host !== '*' && !/^\.?[a-z0-9.-]+$|^\[[a-f0-9:.]+\]$/.test(host)) {
      throw new Error(`"${host}" is not a host name, a .domain or *`)
    }
  }
  return hosts
}

function delay (text: string): DelaySpec | null {
  const value = text.trim()
  const rule = `must be milliseconds (200), a range (100-400) or a median (~150), from 0 to ${MAX_DELAY_MS}`
  const ms = (digits: string): number => {
    const number = Number(digits)
    if (number > MAX_DELAY_MS) throw new Error(rule)
    return number
  }
  let match: RegExpExecArray | null
  if (value === '') return null
  if ((match = /^([0-9]+)$/.exec(value)) !== null) {
    const fixed = ms(match[1] as string)
    return fixed === 0 ? null : { kind: 'fixed', ms: fixed }
  }
  if ((match = /^([0-9]+)\s*-\s*([0-9]+)$/.exec(value)) !== null) {
    const [min, max] = [ms(match[1] as string), ms(match[2] as string)]
    if (min > max) {
      throw new Error(
        `a range goes from the shorter delay to the longer (${max}-${min}), ${rule.replace('must be ', 'and must be ')}`
      )
    }
    if (max === 0) return null
    return min === max ? { kind: 'fixed', ms: min } : { kind: 'uniform', min, max }
  }
  if ((match = /^~\s*([0-9]+)$/.exec(value)) !== null) {
    const median = ms(match[1] as string)
    if (median === 0) throw new Error(`a median must be above 0; ${rule}`)
    return { kind: 'lognormal', median }
  }
  throw new Error(rule)
}

function scale (text: string): number {
  const value = text.trim()
  const rule = 'must be a number from 0.01 to 100 (1: the measured estimate; below 1 only to test the watch)'
  if (!/^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/.test(value)) throw new Error(rule)
  const number = Number(value)
  if (number < 0.01 || number > 100) throw new Error(rule)
  return number
}

function rate (text: string): number {
  const value = text.trim()
  if (!/^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/.test(value) || Number(value) > 1) {
    throw new Error('must be a number from 0 to 1 (0.2: one answer in five)')
  }
  return Number(value)
}

function failStatus (text: string): FailStatus {
  const value = Number(text.trim())
  if (!(FAIL_STATUSES as number[]).includes(value)) {
    throw new Error(`must be one of ${FAIL_STATUSES.join(', ')} (the statuses DRF answers with a {"detail"} body)`)
  }
  return value as FailStatus
}

function fault (text: string): FaultKind | null {
  const value = text.trim().toLowerCase()
  if (value === '' || value === 'none') return null
  if (!(FAULTS as readonly string[]).includes(value)) {
    throw new Error(`must be ${FAULTS.slice(0, -1).join(', ')} or ${FAULTS.at(-1) as string}`)
  }
  return value as FaultKind
}

function chaosReplay (text: string): ChaosReplay {
  const value = text.trim().toLowerCase()
  if (!(CHAOS_REPLAYS as readonly string[]).includes(value)) throw new Error('must be request or order')
  return value as ChaosReplay
}

/** `auto` is decided in loadConfig, which knows HOST. */
function requestJournal (text: string): boolean {
  try {
    return boolean(text)
  } catch {
    throw new Error('must be auto, true or false')
  }
}

function logLevel (text: string): Config['logLevel'] {
  const value = text.trim().toLowerCase()
  if (!(LOG_LEVELS as readonly string[]).includes(value)) throw new Error(`must be one of ${LOG_LEVELS.join(', ')}`)
  return value as Config['logLevel']
}

export function changesDirOf (config: Pick<Config, 'changesDir' | 'snapshotPath'>): string {
  return config.changesDir ?? `${config.snapshotPath}.changes`
}

type OPTIONS_ENTRY = { [K in keyof Config]: Option<K> }[keyof Config]
type OptionSpec = { [K in keyof Config]: Omit<Option<K>, 'flag'> }[keyof Config]

const SPECS: OptionSpec[] = [
  {
    key: 'port',
    env: 'PORT',
    default: '3000',
    rule: 'a whole number from 0 to 65535',
    description: 'TCP port to listen on (0: any free port).',
    parse: integer(0, 65535)
  },
  {
    key: 'host',
    env: 'HOST',
    default: '127.0.0.1',
    rule: 'an address or host name',
    description: 'Address to listen on (0.0.0.0 or :: for every interface).',
    parse: nonEmpty
  },
  {
    key: 'snapshotPath',
    env: 'SNAPSHOT_PATH',
    default: BUNDLED_SNAPSHOT,
    rule: 'a file path',
    shown: 'the sample bundled with the package (its data/snapshot.json)',
    description: 'The snapshot file to serve (or give it as FILE). Unset: the sample bundled with the package.',
    parse: nonEmpty
  },
  {
    key: 'changesDir',
    env: 'CHANGES_DIR',
    default: undefined,
    rule: 'a directory path',
    description: 'The directory of change files (`*.jsonl`, applied in name order after the snapshot). Unset: SNAPSHOT_PATH with `.changes` appended.',
    parse: nonEmpty
  },
  {
    key: 'snapshotUrl',
    env: 'SNAPSHOT_URL',
    default: undefined,
    rule: 'an http://, https:// or s3://bucket/key URL whose name ends in .json, .jsonl or .ndjson',
    description: `Follow a published snapshot instead of SNAPSHOT_PATH: an http(s):// URL or s3://bucket/key (S3 settings: ${S3_ENVIRONMENT.join(', ')}). Its name's extension gives the format; a name ending in manifest.json is a fleet's manifest (a snapshot and its change files).`,
    parse: snapshotUrl
  },
  {
    key: 'snapshotHttpHeaders',
    env: 'SNAPSHOT_HTTP_HEADERS',
    default: undefined,
    rule: '`Name: value` lines, or a JSON object of names to values',
    secret: true,
    description: 'Headers sent with every request to an http(s):// SNAPSHOT_URL\'s origin (a manifest\'s snapshot and change files too), never to another origin a redirect leads to: `Name: value`, one a line (`Authorization: Bearer abc123`), or a JSON object (`{"Authorization": "Bearer abc123", "X-Api-Key": "k"}`). A user:password in SNAPSHOT_URL is sent as Basic authentication: not with an Authorization header here too. Not for s3:// (the AWS settings sign those). Secrets: never logged or shown; prefer the variable, a flag shows in `ps`.',
    parse: httpHeaders
  },
  {
    key: 'snapshotPollSeconds',
    env: 'SNAPSHOT_POLL_SECONDS',
    default: '30',
    rule: 'a whole number from 1 to 86400',
    description: 'How often SNAPSHOT_URL is checked (a conditional request: an unchanged snapshot costs a 304).',
    parse: integer(1, 86_400)
  },
  {
    key: 'snapshotCacheDir',
    env: 'SNAPSHOT_CACHE_DIR',
    default: undefined,
    rule: 'a directory path',
    shown: 'the user\'s cache: $XDG_CACHE_HOME/explore-replica, else ~/.cache/explore-replica',
    description: 'Where the last good copy of SNAPSHOT_URL is kept: served at the next start if the source is down.',
    parse: nonEmpty
  },
  {
    key: 'snapshotMaxMb',
    env: 'SNAPSHOT_MAX_MB',
    default: '16384',
    rule: 'a whole number from 1 to 1048576',
    description: 'Largest object downloaded from SNAPSHOT_URL, in MiB; a manifest\'s update downloads twice this at most, its new objects together.',
    parse: integer(1, 1_048_576)
  },
  {
    key: 's3ForcePathStyle',
    env: 'S3_FORCE_PATH_STYLE',
    default: 'false',
    rule: BOOLEAN_RULE,
    description: 'Path-style S3 addressing (http://host/bucket/key), for stores that need it (MinIO, moto, some Ceph).',
    parse: boolean
  },
  {
    key: 'workers',
    env: 'WORKERS',
    default: '1',
    rule: 'a whole number from 1 to 256, or auto',
    description: 'Threads answering the public port: a number or `auto` (one per core). More than 1 starts serving threads that share one copy of the snapshot; needs Node 22.12 or later.',
    parse: workers
  },
  {
    key: 'memoryLimitMb',
    env: 'MEMORY_LIMIT_MB',
    default: undefined,
    rule: 'a whole number from 64 to 16777216',
    description: 'The memory budget, in MiB, of the whole process (every thread included): a snapshot or change file whose load would pass it is refused like a bad file (after memory just let go has left, up to 2 s), and a load that reaches it is abandoned. Unset: the cgroup\'s limit (v2 memory.max, v1 memory.limit_in_bytes), else the machine\'s memory.',
    parse: optional(integer(64, 16_777_216))
  },
  {
    key: 'memoryEstimateScale',
    env: 'MEMORY_ESTIMATE_SCALE',
    default: '1',
    rule: 'a number from 0.01 to 100',
    description: 'A diagnostic: multiplies the estimated peak of every load (docs/guides/capacity.md). Below 1, files that do not fit are let through to the watch during the load, which abandons them.',
    parse: scale
  },
  {
    key: 'maxLimit',
    env: 'MAX_LIMIT',
    default: '100',
    rule: 'a whole number from 1 to 1000000',
    description: 'Largest page size; a larger `limit` is clamped to it.',
    parse: integer(1, 1_000_000)
  },
  {
    key: 'publicBaseUrl',
    env: 'PUBLIC_BASE_URL',
    default: undefined,
    rule: 'an absolute http(s) URL with no query, fragment or credentials',
    description: 'Scheme and host (and optional path prefix) for next/previous links. Unset: the request\'s own.',
    parse: baseUrl
  },
  {
    key: 'trustProxy',
    env: 'TRUST_PROXY',
    default: 'false',
    rule: BOOLEAN_RULE,
    description: 'Believe X-Forwarded-Proto and X-Forwarded-Host (only behind a proxy that sets them).',
    parse: boolean
  },
  {
    key: 'corsOrigin',
    env: 'CORS_ORIGIN',
    default: '*',
    rule: '*, false, or a comma-separated list of origins such as https://app.example.com',
    description: '`*` for any origin, a comma-separated list of origins, or `false` for no CORS headers.',
    parse: corsOrigin
  },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    default: 'info',
    rule: `one of ${LOG_LEVELS.join(', ')}`,
    description: `One of ${LOG_LEVELS.join(', ')}.`,
    parse: logLevel
  },
  {
    key: 'watch',
    env: 'WATCH',
    default: 'true',
    rule: BOOLEAN_RULE,
    description: 'Reload the snapshot when its file changes (SIGHUP reloads either way).',
    parse: boolean
  },
  {
    key: 'reloadDebounceMs',
    env: 'RELOAD_DEBOUNCE_MS',
    default: '150',
    rule: 'a whole number from 0 to 60000',
    description: 'Quiet time after the last write before a reload, in ms: a burst of saves costs one load. At least 50 is waited (the watcher hears one change of a file per 50 ms).',
    parse: integer(0, 60_000)
  },
  {
    key: 'allowedHosts',
    env: 'ALLOWED_HOSTS',
    default: undefined,
    rule: 'a comma-separated list of host names, .domains or *',
    description: 'Comma-separated hosts a request may name (Django\'s ALLOWED_HOSTS: `news.example.com`, `.example.com` for subdomains, `*`). Unset: any.',
    parse: allowedHosts
  },
  {
    key: 'cacheMaxAge',
    env: 'CACHE_MAX_AGE',
    default: undefined,
    rule: 'a whole number from 0 to 31536000',
    description: 'Seconds for `Cache-Control: public, max-age=N` on pages. Unset: no Cache-Control, like the original.',
    parse: optional(integer(0, 31_536_000))
  },
  {
    key: 'metrics',
    env: 'METRICS',
    default: 'true',
    rule: BOOLEAN_RULE,
    description: 'Serve Prometheus metrics at /-/metrics.',
    parse: boolean
  },
  {
    key: 'docs',
    env: 'DOCS',
    default: 'true',
    rule: BOOLEAN_RULE,
    description: 'Serve the OpenAPI document at /-/openapi.json and Swagger UI at /-/docs.',
    parse: boolean
  },
  {
    key: 'console',
    env: 'CONSOLE',
    default: 'true',
    rule: BOOLEAN_RULE,
    description:
      'Serve the operator\'s console (an HTML page: what is served, refused files, a preview of the data) at /-/.',
    parse: boolean
  },
  {
    key: 'opsPort',
    env: 'OPS_PORT',
    default: undefined,
    rule: 'a whole number from 0 to 65535',
    description: 'Serve every /-/ endpoint (console, status, health, metrics, docs) on this port instead of PORT, which then serves only the API (0: any free port). Unset: on PORT, where a HOST that is not a loopback address gets only the probes (EXPOSE_OPS_PAGES).',
    parse: optional(integer(0, 65535))
  },
  {
    key: 'opsHost',
    env: 'OPS_HOST',
    default: '127.0.0.1',
    rule: 'an address or host name',
    description: 'Address of the OPS_PORT listener.',
    parse: nonEmpty
  },
  {
    key: 'opsAllowedHosts',
    env: 'OPS_ALLOWED_HOSTS',
    default: undefined,
    rule: 'a comma-separated list of host names, .domains or *',
    description: 'Host names the operator\'s pages answer besides `localhost` and IP addresses (`ops.internal`, `.svc.cluster.local`, `*`: any). A request to them naming another host gets 400, so that a web page the operator visits cannot read them by DNS rebinding. Unset: none.',
    parse: allowedHosts
  },
  {
    key: 'exposeOpsPages',
    env: 'EXPOSE_OPS_PAGES',
    default: 'false',
    rule: BOOLEAN_RULE,
    description: 'With OPS_PORT unset and HOST not a loopback address, serve the operator\'s pages (console, /-/status, /-/versions, /-/metrics, /-/docs) on PORT all the same: whoever reaches PORT then reads file paths, the source\'s URL and parts of refused files. Unset (false): PORT serves the API and the probes (/-/healthz, /-/readyz) alone there. Prefer OPS_PORT on a private address.',
    parse: boolean
  },
  {
    key: 'opsToken',
    env: 'OPS_TOKEN',
    default: undefined,
    rule: 'at least 16 characters, not a placeholder',
    secret: true,
    description: 'The bearer token of the operator\'s actions (POST /-/rollback, /-/pin, /-/unpin on OPS_PORT): at least 16 characters, made by a generator (`openssl rand -hex 32`); a placeholder such as `replace-me-with-a-long-secret` (words like replace, change, example, secret, placeholder; `<…>`, `…`, an unexpanded `$(…)`; one character repeated) is refused. Unset: the actions answer 403. Prefer the variable: a flag shows in `ps`.',
    parse: opsToken
  },
  {
    key: 'stateDir',
    env: 'STATE_DIR',
    default: undefined,
    rule: 'a directory path',
    description: 'The replica\'s own directory: the kept versions (KEEP_VERSIONS) and the pin. One per replica. Unset: `state` in SNAPSHOT_CACHE_DIR (writable wherever the cache is, and on its disk: kept downloads are hard links); in the default SNAPSHOT_CACHE_DIR, which every replica of the user shares, `state-` and a digest of the snapshot\'s path or URL (those not used for STATE_PRUNE_DAYS are removed at start).',
    parse: nonEmpty
  },
  {
    key: 'statePruneDays',
    env: 'STATE_PRUNE_DAYS',
    default: '30',
    rule: 'a whole number from 0 to 3650',
    description: 'At start, the states of other snapshots in the default SNAPSHOT_CACHE_DIR (`state-…`) not used for this many days are removed, each said in the log; 0: none. Only the default layout is pruned (a STATE_DIR given that is not named state-<12 hex digits> prunes nothing), and never a state a live replica uses.',
    parse: integer(0, 3650)
  },
  {
    key: 'keepVersions',
    env: 'KEEP_VERSIONS',
    default: '3',
    rule: 'a whole number from 1 to 100',
    description: 'How many served versions keep their files in STATE_DIR, for a rollback without a download.',
    parse: integer(1, 100)
  },
  {
    key: 'requestLog',
    env: 'REQUEST_LOG',
    default: 'true',
    rule: BOOLEAN_RULE,
    description: 'One log line per request at info (method, URL, status, time).',
    parse: boolean
  },
  {
    key: 'logPretty',
    env: 'LOG_PRETTY',
    default: 'auto',
    rule: 'auto, true or false',
    description: 'Human-readable logs: `auto` (only on a terminal), true or false. Otherwise JSON lines.',
    parse: logPretty
  },
  {
    key: 'shutdownGraceMs',
    env: 'SHUTDOWN_GRACE_MS',
    default: '10000',
    rule: 'a whole number from 1 to 600000',
    description: 'On SIGTERM/SIGINT, how long in-flight requests may take before the process exits anyway (exit 1).',
    parse: integer(1, 600_000)
  },
  {
    key: 'requestTimeoutMs',
    env: 'REQUEST_TIMEOUT_MS',
    default: '10000',
    rule: 'a whole number from 1 to 600000',
    description: 'Time a client has to send a whole request; a connection silent mid-request or mid-answer closes after 6× this, one idle between requests after 72 s (Fastify\'s keep-alive, above nginx\'s 60 s).',
    parse: integer(1, 600_000)
  },
  {
    key: 'maxUrlLength',
    env: 'MAX_URL_LENGTH',
    default: '8192',
    rule: 'a whole number from 64 to 65536',
    description: 'Longest request target accepted; longer ones get 414.',
    parse: integer(64, 65_536)
  },
  {
    key: 'pageCacheMb',
    env: 'PAGE_CACHE_MB',
    default: '64',
    rule: 'a whole number from 0 to 65536',
    description: 'Memory for whole answers kept per snapshot and serving thread, in MiB, each counted with its key, and a quarter more for unions of companies (0: neither); the memory budget keeps it aside.',
    parse: integer(0, 65_536)
  },
  {
    key: 'fastPath',
    env: 'FAST_PATH',
    default: 'true',
    rule: BOOLEAN_RULE,
    description: 'Answer GET and HEAD of pages before Fastify routes them (same answers, 12–28% more of them per second: docs/decisions/002).',
    parse: boolean
  },
  // docs/guides/demo-server.md#trouble-on-purpose
  {
    key: 'delayMs',
    env: 'DELAY_MS',
    default: undefined,
    rule: `milliseconds (200), a range (100-400) or a median (~150), from 0 to ${MAX_DELAY_MS}`,
    description: 'Demo server: wait before every page answer: `200` (ms), `100-400` (uniform) or `~150` (lognormal with that median). Unset: none.',
    parse: delay
  },
  {
    key: 'failRate',
    env: 'FAIL_RATE',
    default: '0',
    rule: 'a number from 0 to 1',
    description: 'Demo server: the share of page requests answered with FAIL_STATUS instead (0 to 1).',
    parse: rate
  },
  {
    key: 'failStatus',
    env: 'FAIL_STATUS',
    default: '503',
    rule: `one of ${FAIL_STATUSES.join(', ')}`,
    description: `Demo server: the status of a simulated failure, with DRF's body for it: ${FAIL_STATUSES.join(', ')}.`,
    parse: failStatus
  },
  {
    key: 'fault',
    env: 'FAULT',
    default: undefined,
    rule: 'reset, truncate or dribble',
    description: 'Demo server: break connections: `reset` (before any answer), `truncate` (half the body, then close) or `dribble` (the body in small pieces, slowly).',
    parse: fault
  },
  {
    key: 'faultRate',
    env: 'FAULT_RATE',
    default: '1',
    rule: 'a number from 0 to 1',
    description: 'Demo server: the share of page requests FAULT breaks (0 to 1).',
    parse: rate
  },
  {
    key: 'chaosSeed',
    env: 'CHAOS_SEED',
    default: undefined,
    rule: 'a whole number from 0 to 4294967295',
    description: 'Demo server: a whole number that makes the delays, failures and faults drawn the same on every run (what they follow: CHAOS_REPLAY). Unset: a new one each start (logged).',
    parse: optional(integer(0, 0xffff_ffff))
  },
  {
    key: 'chaos',
    env: 'CHAOS',
    default: 'false',
    rule: BOOLEAN_RULE,
    description: 'Demo server: let each request ask for its own trouble (`Prefer: delay=500`, `Prefer: status=503`, `?__delay=`, `?__status=`). Never on a public replica.',
    parse: boolean
  },
  {
    key: 'chaosReplay',
    env: 'CHAOS_REPLAY',
    default: 'request',
    rule: 'request or order',
    description: 'Demo server: what CHAOS_SEED replays. `request`: each request\'s trouble follows the seed, the request (method, target, and under CHAOS its Prefer header) and how often that request was asked for before, so parallel loads get the same trouble on every run. `order`: one sequence of draws in the order requests arrive.',
    parse: chaosReplay
  },
  // docs/guides/demo-server.md#the-request-journal
  {
    key: 'requestJournal',
    env: 'REQUEST_JOURNAL',
    default: 'auto',
    rule: 'auto, true or false',
    description: 'Keep the last requests the public port answered, for GET /-/requests (and .har): method, URL, a few headers, status, bytes, time, version and trouble, never a credential. `auto`: on when HOST is a loopback address (a demo on its own machine, the default 127.0.0.1), off otherwise.',
    parse: requestJournal
  },
  {
    key: 'requestJournalSize',
    env: 'REQUEST_JOURNAL_SIZE',
    default: '1000',
    rule: 'a whole number from 1 to 100000',
    description: 'How many requests the journal keeps, per serving thread; it also keeps at most 1 KiB per request on average (long URLs and headers count more), the oldest dropped first.',
    parse: integer(1, 100_000)
  }
]

export const OPTIONS = SPECS.map(o => ({ ...o, flag: `--${o.env.toLowerCase().replaceAll('_', '-')}` }) as OPTIONS_ENTRY)

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
    } else if ((option.parse === boolean || option.parse === logPretty || option.parse === requestJournal) &&
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
      const auto = text.trim().toLowerCase() === 'auto'
      config[option.key] = option.key === 'logPretty' && auto
        ? tty
        : option.key === 'requestJournal' && auto ? loopbackName(String(config.host).trim()) : option.parse(text)
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

function optionError (option: OPTIONS_ENTRY, name: string, text: string, problem: string): string {
  const shown = option.secret === true
    ? '(hidden)'
    : JSON.stringify(option.key === 'snapshotUrl' ? shownUrl(text) : text)
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
