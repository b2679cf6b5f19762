// Every option, declared once: its variable (its flag follows), default, meaning and type with its bounds, from
// which ConfigSchema, the rule that --help, the reference and each error say, and the parser of its text
// are made (declare-option.ts); an option whose text a schema cannot describe brings its parser.
import { Type, type Static } from '@sinclair/typebox'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { FAIL_STATUSES } from '../errors.js'
import { loopbackName } from '../loopback-name.js'
import { SecretUrl, shownUrl } from '../secret-url.js'
import { declareOption, nonEmpty, type Option } from './declare-option.js'
import {
  allowedHosts, baseUrl, corsOrigin, delay, DelaySchema, httpHeaders, MAX_DELAY_MS, OPS_TOKEN_LENGTH, opsToken,
  snapshotUrl
} from './special-values.js'

/** data/ is beside src/ and dist/. */
export const BUNDLED_SNAPSHOT = fileURLToPath(new URL('../../data/snapshot.json', import.meta.url))

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const FAULTS = ['reset', 'truncate', 'dribble'] as const
export type FaultKind = typeof FAULTS[number]
/** What a seed's draws follow: each request's own key and askings (ADR 041), or the order requests arrive in. */
const CHAOS_REPLAYS = ['request', 'order'] as const
export type ChaosReplay = typeof CHAOS_REPLAYS[number]
const MAX_WORKERS = 256

/** Read by the AWS SDK, not loadConfig; named for --help and deploy/'s tests. */
export const S3_ENVIRONMENT = [
  'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL'
] as const

const HOST_LIST = {
  schema: Type.Union([Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Null()]),
  rule: 'a comma-separated list of host names, .domains or *',
  parse: allowedHosts
}
const RATE = { schema: Type.Number({ minimum: 0, maximum: 1 }), note: '0.2: one answer in five' }

// In the order --help and the reference list them, and loadConfig reads them (REQUEST_JOURNAL's auto reads HOST).
const DECLARED = {
  port: declareOption({
    env: 'PORT',
    schema: Type.Integer({ minimum: 0, maximum: 65535 }),
    default: '3000',
    description: 'TCP port to listen on (0: any free port).'
  }),
  host: declareOption({
    env: 'HOST',
    schema: Type.String({ minLength: 1 }),
    default: '127.0.0.1',
    rule: 'an address or host name',
    description: 'Address to listen on (0.0.0.0 or :: for every interface).'
  }),
  snapshotPath: declareOption({
    env: 'SNAPSHOT_PATH',
    schema: Type.String({ minLength: 1 }),
    default: BUNDLED_SNAPSHOT,
    shown: 'the sample bundled with the package (its data/snapshot.json)',
    rule: 'a file path',
    description: 'The snapshot file to serve (or give it as FILE). Unset: the sample bundled with the package.'
  }),
  changesDir: declareOption({
    env: 'CHANGES_DIR',
    schema: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    rule: 'a directory path',
    description: 'The directory of change files (`*.jsonl`, applied in name order after the snapshot). Unset: SNAPSHOT_PATH with `.changes` appended.',
    parse: nonEmpty
  }),
  snapshotUrl: declareOption({
    env: 'SNAPSHOT_URL',
    schema: Type.Union([Type.Unsafe<SecretUrl>(Type.Object({ shown: Type.String({ minLength: 1 }) })), Type.Null()]),
    rule: 'an http://, https:// or s3://bucket/key URL whose name ends in .json, .jsonl or .ndjson',
    description: `Follow a published snapshot instead of SNAPSHOT_PATH: an http(s):// URL or s3://bucket/key (S3 settings: ${S3_ENVIRONMENT.join(', ')}). Its name's extension gives the format; a name ending in manifest.json is a fleet's manifest (a snapshot and its change files).`,
    shownValue: shownUrl,
    parse: snapshotUrl
  }),
  snapshotHttpHeaders: declareOption({
    env: 'SNAPSHOT_HTTP_HEADERS',
    schema: Type.Union([Type.Record(Type.String({ minLength: 1 }), Type.String()), Type.Null()]),
    rule: '`Name: value` lines, or a JSON object of names to values',
    secret: true,
    description: 'Headers sent with every request to an http(s):// SNAPSHOT_URL\'s origin (a manifest\'s snapshot and change files too), never to another origin a redirect leads to: `Name: value`, one a line (`Authorization: Bearer abc123`), or a JSON object (`{"Authorization": "Bearer abc123", "X-Api-Key": "k"}`). A user:password in SNAPSHOT_URL is sent as Basic authentication: not with an Authorization header here too. Not for s3:// (the AWS settings sign those). Secrets: never logged or shown; prefer the variable, a flag shows in `ps`.',
    parse: httpHeaders
  }),
  snapshotPollSeconds: declareOption({
    env: 'SNAPSHOT_POLL_SECONDS',
    schema: Type.Integer({ minimum: 1, maximum: 86_400 }),
    default: '30',
    description: 'How often SNAPSHOT_URL is checked (a conditional request: an unchanged snapshot costs a 304).'
  }),
  snapshotCacheDir: declareOption({
    env: 'SNAPSHOT_CACHE_DIR',
    schema: Type.String({ minLength: 1 }),
    shown: 'the user\'s cache: $XDG_CACHE_HOME/explore-replica, else ~/.cache/explore-replica',
    rule: 'a directory path',
    description: 'Where the last good copy of SNAPSHOT_URL is kept: served at the next start if the source is down.'
  }),
  snapshotMaxMb: declareOption({
    env: 'SNAPSHOT_MAX_MB',
    schema: Type.Integer({ minimum: 1, maximum: 1_048_576 }),
    default: '16384',
    description: 'Largest object downloaded from SNAPSHOT_URL, in MiB; a manifest\'s update downloads twice this at most, its new objects together.'
  }),
  s3ForcePathStyle: declareOption({
    env: 'S3_FORCE_PATH_STYLE',
    schema: Type.Boolean(),
    default: 'false',
    description: 'Path-style S3 addressing (http://host/bucket/key), for stores that need it (MinIO, moto, some Ceph).'
  }),
  workers: declareOption({
    env: 'WORKERS',
    schema: Type.Integer({ minimum: 1, maximum: MAX_WORKERS }),
    default: '1',
    description: 'Threads answering the public port: a number or `auto` (one per core). More than 1 starts serving threads that share one copy of the snapshot; needs Node 22.12 or later.',
    auto: () => Math.min(availableParallelism(), MAX_WORKERS)
  }),
  memoryLimitMb: declareOption({
    env: 'MEMORY_LIMIT_MB',
    schema: Type.Union([Type.Integer({ minimum: 64, maximum: 16_777_216 }), Type.Null()]),
    description: 'The memory budget, in MiB, of the whole process (every thread included): a snapshot or change file whose load would pass it is refused like a bad file (after memory just let go has left: 2 s, longer while it still falls, 10 s at most), and a load that reaches it is abandoned. Unset: the cgroup\'s limit (v2 memory.max, v1 memory.limit_in_bytes), else the machine\'s memory.'
  }),
  memoryEstimateScale: declareOption({
    env: 'MEMORY_ESTIMATE_SCALE',
    schema: Type.Number({ minimum: 0.01, maximum: 100 }),
    note: '1: the measured estimate; below 1 only to test the watch',
    default: '1',
    description: 'A diagnostic: multiplies the estimated peak of every load (docs/guides/capacity.md). Below 1, files that do not fit are let through to the watch during the load, which abandons them.'
  }),
  maxLimit: declareOption({
    env: 'MAX_LIMIT',
    schema: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    default: '100',
    description: 'Largest page size; a larger `limit` is clamped to it.'
  }),
  publicBaseUrl: declareOption({
    env: 'PUBLIC_BASE_URL',
    schema: Type.Union([Type.String(), Type.Null()]),
    rule: 'an absolute http(s) URL with no query, fragment or credentials',
    description: 'Scheme and host (and optional path prefix) for next/previous links. Unset: the request\'s own.',
    parse: baseUrl
  }),
  trustProxy: declareOption({
    env: 'TRUST_PROXY',
    schema: Type.Boolean(),
    default: 'false',
    description: 'Believe X-Forwarded-Proto and X-Forwarded-Host (only behind a proxy that sets them).'
  }),
  corsOrigin: declareOption({
    env: 'CORS_ORIGIN',
    schema: Type.Union([Type.Literal('*'), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Literal(false)]),
    default: '*',
    rule: '*, false, or a comma-separated list of origins such as https://app.example.com',
    description: '`*` for any origin, a comma-separated list of origins, or `false` for no CORS headers.',
    parse: corsOrigin
  }),
  logLevel: declareOption({
    env: 'LOG_LEVEL',
    schema: Type.Union(LOG_LEVELS.map(level => Type.Literal(level))),
    default: 'info',
    description: `One of ${LOG_LEVELS.join(', ')}.`
  }),
  watch: declareOption({
    env: 'WATCH',
    schema: Type.Boolean(),
    default: 'true',
    description: 'Reload the snapshot when its file changes (SIGHUP reloads either way).'
  }),
  reloadDebounceMs: declareOption({
    env: 'RELOAD_DEBOUNCE_MS',
    schema: Type.Integer({ minimum: 0, maximum: 60_000 }),
    default: '150',
    description: 'Quiet time after the last write before a reload, in ms: a burst of saves costs one load. At least 50 is waited (the watcher hears one change of a file per 50 ms).'
  }),
  allowedHosts: declareOption({
    env: 'ALLOWED_HOSTS',
    ...HOST_LIST,
    description: 'Comma-separated hosts a request may name (Django\'s ALLOWED_HOSTS: `news.example.com`, `.example.com` for subdomains, `*`). Unset: any.'
  }),
  cacheMaxAge: declareOption({
    env: 'CACHE_MAX_AGE',
    schema: Type.Union([Type.Integer({ minimum: 0, maximum: 31_536_000 }), Type.Null()]),
    description: 'Seconds for `Cache-Control: public, max-age=N` on pages. Unset: no Cache-Control, like the original.'
  }),
  metrics: declareOption({
    env: 'METRICS',
    schema: Type.Boolean(),
    default: 'true',
    description: 'Serve Prometheus metrics at /-/metrics.'
  }),
  docs: declareOption({
    env: 'DOCS',
    schema: Type.Boolean(),
    default: 'true',
    description: 'Serve the OpenAPI document at /-/openapi.json and Swagger UI at /-/docs.'
  }),
  console: declareOption({
    env: 'CONSOLE',
    schema: Type.Boolean(),
    default: 'true',
    description:
      'Serve the operator\'s console (an HTML page: what is served, refused files, a preview of the data) at /-/.'
  }),
  opsPort: declareOption({
    env: 'OPS_PORT',
    schema: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]),
    description: 'Serve every /-/ endpoint (console, status, health, metrics, docs) on this port instead of PORT, which then serves only the API (0: any free port). Unset: on PORT, where a HOST that is not a loopback address gets only the probes (EXPOSE_OPS_PAGES).'
  }),
  opsHost: declareOption({
    env: 'OPS_HOST',
    schema: Type.String({ minLength: 1 }),
    default: '127.0.0.1',
    rule: 'an address or host name',
    description: 'Address of the OPS_PORT listener.'
  }),
  opsAllowedHosts: declareOption({
    env: 'OPS_ALLOWED_HOSTS',
    ...HOST_LIST,
    description: 'Host names the operator\'s pages answer besides `localhost` and IP addresses (`ops.internal`, `.svc.cluster.local`, `*`: any). A request to them naming another host gets 400, so that a web page the operator visits cannot read them by DNS rebinding. Unset: none.'
  }),
  exposeOpsPages: declareOption({
    env: 'EXPOSE_OPS_PAGES',
    schema: Type.Boolean(),
    default: 'false',
    description: 'With OPS_PORT unset and HOST not a loopback address, serve the operator\'s pages (console, /-/status, /-/versions, /-/metrics, /-/docs) on PORT all the same: whoever reaches PORT then reads file paths, the source\'s URL and parts of refused files. Unset (false): PORT serves the API and the probes (/-/healthz, /-/readyz) alone there. Prefer OPS_PORT on a private address.'
  }),
  opsToken: declareOption({
    env: 'OPS_TOKEN',
    schema: Type.Union([Type.String({ minLength: OPS_TOKEN_LENGTH }), Type.Null()]),
    rule: `at least ${OPS_TOKEN_LENGTH} characters, not a placeholder`,
    secret: true,
    description: 'The bearer token of the operator\'s actions (POST /-/rollback, /-/pin, /-/unpin on OPS_PORT): at least 16 characters, made by a generator (`openssl rand -hex 32`); a placeholder such as `replace-me-with-a-long-secret` (words like replace, change, example, secret, placeholder; `<…>`, `…`, an unexpanded `$(…)`; one character repeated) is refused. Unset: the actions answer 403. Prefer the variable: a flag shows in `ps`.',
    parse: opsToken
  }),
  stateDir: declareOption({
    env: 'STATE_DIR',
    schema: Type.String({ minLength: 1 }),
    rule: 'a directory path',
    description: 'The replica\'s own directory: the kept versions (KEEP_VERSIONS) and the pin. One per replica. Unset: `state` in SNAPSHOT_CACHE_DIR (writable wherever the cache is, and on its disk: kept downloads are hard links); in the default SNAPSHOT_CACHE_DIR, which every replica of the user shares, `state-` and a digest of the snapshot\'s path or URL (those not used for STATE_PRUNE_DAYS are removed at start).'
  }),
  statePruneDays: declareOption({
    env: 'STATE_PRUNE_DAYS',
    schema: Type.Integer({ minimum: 0, maximum: 3650 }),
    default: '30',
    description: 'At start, the states of other snapshots in the default SNAPSHOT_CACHE_DIR (`state-…`) not used for this many days are removed, each said in the log; 0: none. Only the default layout is pruned (a STATE_DIR given that is not named state-<12 hex digits> prunes nothing), and never a state a live replica uses.'
  }),
  keepVersions: declareOption({
    env: 'KEEP_VERSIONS',
    schema: Type.Integer({ minimum: 1, maximum: 100 }),
    default: '3',
    description: 'How many served versions keep their files in STATE_DIR, for a rollback without a download.'
  }),
  requestLog: declareOption({
    env: 'REQUEST_LOG',
    schema: Type.Boolean(),
    default: 'true',
    description: 'One log line per request at info (method, URL, status, time).'
  }),
  logPretty: declareOption({
    env: 'LOG_PRETTY',
    schema: Type.Boolean(),
    default: 'auto',
    rule: 'auto, true or false',
    description: 'Human-readable logs: `auto` (only on a terminal), true or false. Otherwise JSON lines.',
    auto: ({ tty }) => tty
  }),
  shutdownGraceMs: declareOption({
    env: 'SHUTDOWN_GRACE_MS',
    schema: Type.Integer({ minimum: 1, maximum: 600_000 }),
    default: '10000',
    description: 'On SIGTERM/SIGINT, how long in-flight requests may take before the process exits anyway (exit 1).'
  }),
  requestTimeoutMs: declareOption({
    env: 'REQUEST_TIMEOUT_MS',
    schema: Type.Integer({ minimum: 1, maximum: 600_000 }),
    default: '10000',
    description: 'Time a client has to send a whole request; a connection silent mid-request or mid-answer closes after 6× this, one idle between requests after 72 s (Fastify\'s keep-alive, above nginx\'s 60 s).'
  }),
  maxConnections: declareOption({
    env: 'MAX_CONNECTIONS',
    schema: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    default: '1000',
    description: 'Connections each serving thread holds at once (with `WORKERS=1`, the process); more are closed as they come. Pipelined requests are answered one at a time; a connection with over 16 unanswered is closed. The operator\'s port holds as many again.'
  }),
  maxUrlLength: declareOption({
    env: 'MAX_URL_LENGTH',
    schema: Type.Integer({ minimum: 64, maximum: 65_536 }),
    default: '8192',
    description: 'Longest request target accepted; longer ones get 414.'
  }),
  pageCacheMb: declareOption({
    env: 'PAGE_CACHE_MB',
    schema: Type.Integer({ minimum: 0, maximum: 65_536 }),
    default: '64',
    description: 'Memory for whole answers kept per snapshot and serving thread, in MiB, each counted with its key, and a quarter more for unions of companies (0: neither); the memory budget keeps it aside.'
  }),
  fastPath: declareOption({
    env: 'FAST_PATH',
    schema: Type.Boolean(),
    default: 'true',
    description: 'Answer GET and HEAD of pages before Fastify routes them (same answers, 12–28% more of them per second: docs/decisions/002).'
  }),
  // docs/guides/demo-server.md#trouble-on-purpose
  delayMs: declareOption({
    env: 'DELAY_MS',
    schema: Type.Union([DelaySchema, Type.Null()]),
    rule: `milliseconds (200), a range (100-400) or a median (~150), from 0 to ${MAX_DELAY_MS}`,
    description: 'Demo server: wait before every page answer: `200` (ms), `100-400` (uniform) or `~150` (lognormal with that median). Unset: none.',
    parse: delay
  }),
  failRate: declareOption({
    env: 'FAIL_RATE',
    ...RATE,
    default: '0',
    description: 'Demo server: the share of page requests answered with FAIL_STATUS instead (0 to 1).'
  }),
  failStatus: declareOption({
    env: 'FAIL_STATUS',
    schema: Type.Union(FAIL_STATUSES.map(status => Type.Literal(status))),
    note: 'the statuses DRF answers with a {"detail"} body',
    default: '503',
    description: `Demo server: the status of a simulated failure, with DRF's body for it: ${FAIL_STATUSES.join(', ')}.`
  }),
  fault: declareOption({
    env: 'FAULT',
    schema: Type.Union([...FAULTS.map(kind => Type.Literal(kind)), Type.Null()]),
    description: 'Demo server: break connections: `reset` (before any answer), `truncate` (half the body, then close) or `dribble` (the body in small pieces, slowly).',
    parse: (text, bySchema) => text.trim().toLowerCase() === 'none' ? null : bySchema(text)
  }),
  faultRate: declareOption({
    env: 'FAULT_RATE',
    ...RATE,
    default: '1',
    description: 'Demo server: the share of page requests FAULT breaks (0 to 1).'
  }),
  chaosSeed: declareOption({
    env: 'CHAOS_SEED',
    schema: Type.Union([Type.Integer({ minimum: 0, maximum: 0xffff_ffff }), Type.Null()]),
    description: 'Demo server: a whole number that makes the delays, failures and faults drawn the same on every run (what they follow: CHAOS_REPLAY). Unset: a new one each start (logged).'
  }),
  chaos: declareOption({
    env: 'CHAOS',
    schema: Type.Boolean(),
    default: 'false',
    description: 'Demo server: let each request ask for its own trouble (`Prefer: delay=500`, `Prefer: status=503`, `?__delay=`, `?__status=`). Never on a public replica.'
  }),
  chaosReplay: declareOption({
    env: 'CHAOS_REPLAY',
    schema: Type.Union(CHAOS_REPLAYS.map(replay => Type.Literal(replay))),
    default: 'request',
    description: 'Demo server: what CHAOS_SEED replays. `request`: each request\'s trouble follows the seed, the request (method, target, and under CHAOS its Prefer header) and how often that request was asked for before, so parallel loads get the same trouble on every run. `order`: one sequence of draws in the order requests arrive.'
  }),
  // docs/guides/demo-server.md#the-request-journal
  requestJournal: declareOption({
    env: 'REQUEST_JOURNAL',
    schema: Type.Boolean(),
    default: 'auto',
    rule: 'auto, true or false',
    description: 'Keep the last requests the public port answered, for GET /-/requests (and .har): method, URL, a few headers, status, bytes, time, version and trouble, never a credential. `auto`: on when HOST is a loopback address (a demo on its own machine, the default 127.0.0.1), off otherwise.',
    auto: ({ config }) => loopbackName(String(config.host).trim())
  }),
  requestJournalSize: declareOption({
    env: 'REQUEST_JOURNAL_SIZE',
    schema: Type.Integer({ minimum: 1, maximum: 100_000 }),
    default: '1000',
    description: 'How many requests the journal keeps, per serving thread; it also keeps at most 1 KiB per request on average (long URLs and headers count more), the oldest dropped first.'
  })
}

export const ConfigSchema = Type.Object(
  Object.fromEntries(Object.entries(DECLARED).map(([key, option]) => [key, option.schema])) as
    { [K in keyof typeof DECLARED]: (typeof DECLARED)[K]['schema'] },
  { additionalProperties: false }
)

export type Config = Readonly<Static<typeof ConfigSchema>>

export const OPTIONS: ReadonlyArray<Option & { key: keyof Config }> =
  Object.entries(DECLARED).map(([key, option]) => ({ key: key as keyof Config, ...option as Option }))
