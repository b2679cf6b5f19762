// src/config.ts and the declarations it is made of: each option's variable, flag, default, and the rule a bad value is refused by.
import t from 'tap'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { availableParallelism, homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { KindGuard, Type, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { BUNDLED_SNAPSHOT, helpText, loadConfig, OPTIONS } from '../src/config.js'
import { declareOption } from '../src/config/declare-option.js'
import { ConfigError } from '../src/errors.js'
import { SecretUrl } from '../src/secret-url.js'

// src/config.ts: the defaults, each variable and its flag, and what the settings become.
t.test('defaults', async t => {
  t.same(loadConfig(), {
    port: 3000,
    host: '127.0.0.1',
    snapshotPath: BUNDLED_SNAPSHOT,
    snapshotUrl: null,
    snapshotHttpHeaders: null,
    changesDir: null,
    snapshotPollSeconds: 30,
    snapshotCacheDir: join(homedir(), '.cache', 'explore-replica'),
    snapshotMaxMb: 16384,
    s3ForcePathStyle: false,
    stateDir: join(homedir(), '.cache', 'explore-replica', `state-${createHash('sha256').update(BUNDLED_SNAPSHOT).digest('hex').slice(0, 12)}`),
    statePruneDays: 30,
    keepVersions: 3,
    opsToken: null,
    workers: 1,
    memoryLimitMb: null,
    memoryEstimateScale: 1,
    maxLimit: 100,
    publicBaseUrl: null,
    trustProxy: false,
    corsOrigin: '*',
    logLevel: 'info',
    watch: true,
    reloadDebounceMs: 150,
    allowedHosts: null,
    cacheMaxAge: null,
    metrics: true,
    docs: true,
    console: true,
    opsPort: null,
    opsHost: '127.0.0.1',
    opsAllowedHosts: null,
    exposeOpsPages: false,
    requestLog: true,
    logPretty: false,
    shutdownGraceMs: 10000,
    requestTimeoutMs: 10000,
    maxConnections: 1000,
    maxUrlLength: 8192,
    pageCacheMb: 64,
    fastPath: true,
    delayMs: null,
    failRate: 0,
    failStatus: 503,
    fault: null,
    faultRate: 1,
    chaosSeed: null,
    chaos: false,
    chaosReplay: 'request',
    requestJournal: true,
    requestJournalSize: 1000
  })
  t.equal(loadConfig({ tty: true }).logPretty, true, 'LOG_PRETTY=auto: pretty only on a terminal')
  t.equal(loadConfig({ tty: true, env: { LOG_PRETTY: 'false' } }).logPretty, false)
  t.ok(Object.isFrozen(loadConfig()))
})

t.test('environment variables, each also a flag; the flag wins', async t => {
  const env = {
    PORT: '8080',
    HOST: '0.0.0.0',
    SNAPSHOT_PATH: '/srv/snap.json',
    MAX_LIMIT: '50',
    PUBLIC_BASE_URL: 'https://news.example.com/',
    TRUST_PROXY: 'true',
    CORS_ORIGIN: 'https://a.test, https://b.test',
    LOG_LEVEL: 'WARN',
    WATCH: 'off',
    RELOAD_DEBOUNCE_MS: '500',
    ALLOWED_HOSTS: 'News.Example.com, .example.org',
    CACHE_MAX_AGE: '60',
    METRICS: 'no',
    DOCS: '0',
    REQUEST_LOG: 'false',
    LOG_PRETTY: 'true',
    SHUTDOWN_GRACE_MS: '2000',
    REQUEST_TIMEOUT_MS: '5000',
    MAX_CONNECTIONS: '50',
    MAX_URL_LENGTH: '4096',
    PAGE_CACHE_MB: '0',
    FAST_PATH: 'false',
    SNAPSHOT_URL: 's3://exports/explore/snapshot.jsonl',
    CHANGES_DIR: '/srv/changes',
    SNAPSHOT_POLL_SECONDS: '60',
    SNAPSHOT_CACHE_DIR: '/var/cache/explore',
    SNAPSHOT_MAX_MB: '4096',
    S3_FORCE_PATH_STYLE: 'true',
    KEEP_VERSIONS: '5',
    STATE_PRUNE_DAYS: '7',
    OPS_TOKEN: 'sixteen-chars-at-least',
    WORKERS: '4',
    MEMORY_LIMIT_MB: '1200',
    MEMORY_ESTIMATE_SCALE: '0.5',
    CONSOLE: 'false',
    OPS_PORT: '9100',
    OPS_HOST: '10.0.0.5',
    OPS_ALLOWED_HOSTS: 'ops.internal, .svc.cluster.local',
    EXPOSE_OPS_PAGES: 'true',
    DELAY_MS: '100-400',
    FAIL_RATE: '0.2',
    FAIL_STATUS: '429',
    FAULT: 'Dribble',
    FAULT_RATE: '.5',
    CHAOS_SEED: '42',
    CHAOS: 'true',
    CHAOS_REPLAY: 'Order',
    REQUEST_JOURNAL: 'auto',
    REQUEST_JOURNAL_SIZE: '50'
  }
  t.same(loadConfig({ env }), {
    port: 8080,
    host: '0.0.0.0',
    snapshotPath: '/srv/snap.json',
    snapshotUrl: new SecretUrl('s3://exports/explore/snapshot.jsonl'),
    snapshotHttpHeaders: null,
    changesDir: '/srv/changes',
    snapshotPollSeconds: 60,
    snapshotCacheDir: '/var/cache/explore',
    snapshotMaxMb: 4096,
    s3ForcePathStyle: true,
    stateDir: '/var/cache/explore/state',
    statePruneDays: 7,
    keepVersions: 5,
    opsToken: 'sixteen-chars-at-least',
    workers: 4,
    memoryLimitMb: 1200,
    memoryEstimateScale: 0.5,
    maxLimit: 50,
    publicBaseUrl: 'https://news.example.com',
    trustProxy: true,
    corsOrigin: ['https://a.test', 'https://b.test'],
    logLevel: 'warn',
    watch: false,
    reloadDebounceMs: 500,
    allowedHosts: ['news.example.com', '.example.org'],
    cacheMaxAge: 60,
    metrics: false,
    docs: false,
    console: false,
    opsPort: 9100,
    opsHost: '10.0.0.5',
    opsAllowedHosts: ['ops.internal', '.svc.cluster.local'],
    exposeOpsPages: true,
    requestLog: false,
    logPretty: true,
    shutdownGraceMs: 2000,
    requestTimeoutMs: 5000,
    maxConnections: 50,
    maxUrlLength: 4096,
    pageCacheMb: 0,
    fastPath: false,
    delayMs: { kind: 'uniform', min: 100, max: 400 },
    failRate: 0.2,
    failStatus: 429,
    fault: 'dribble',
    faultRate: 0.5,
    chaosSeed: 42,
    chaos: true,
    chaosReplay: 'order',
    requestJournal: false,
    requestJournalSize: 50
  })
  t.equal(loadConfig({ env, argv: ['--watch'] }).watch, true, 'a bare --watch')
  const flags = loadConfig({ env, argv: ['--port', '9000', '--max-limit=20', '--trust-proxy', '--cors-origin', 'false', '--public-base-url=https://x.test/prefix/'] })
  t.same([flags.port, flags.maxLimit, flags.trustProxy, flags.corsOrigin, flags.publicBaseUrl, flags.host], [9000, 20, true, false, 'https://x.test/prefix', '0.0.0.0'])
  t.equal(loadConfig({ argv: ['--trust-proxy', 'false'] }).trustProxy, false)
  t.equal(loadConfig({ argv: ['--trust-proxy', '--port', '1'] }).trustProxy, true, 'a bare boolean flag')
  t.equal(loadConfig({ env: { PUBLIC_BASE_URL: '' } }).publicBaseUrl, null, 'empty means unset')
  t.equal(loadConfig({ env: { CORS_ORIGIN: '*' } }).corsOrigin, '*')
  t.equal(loadConfig({ env: { WORKERS: 'auto' } }).workers, availableParallelism(), 'WORKERS=auto: one per core')
  t.equal(loadConfig({ env: { SNAPSHOT_URL: 'https://cdn.example.com/x/snapshot.json?v=1' } }).snapshotUrl?.reveal().href, 'https://cdn.example.com/x/snapshot.json?v=1')
})

t.test('no snapshot named: the sample bundled with the package, whatever the working directory', async t => {
  t.equal(BUNDLED_SNAPSHOT, join(import.meta.dirname, '..', 'data', 'snapshot.json'), 'data/ at the package root')
  t.ok(existsSync(BUNDLED_SNAPSHOT))
})

t.test('FILE first names the snapshot, as --snapshot-path does, and only once', async t => {
  t.equal(loadConfig({ argv: ['snap.jsonl'] }).snapshotPath, 'snap.jsonl')
  t.equal(loadConfig({ argv: ['/srv/snap.json', '--port', '1'], env: { SNAPSHOT_PATH: '/other.json' } }).snapshotPath, '/srv/snap.json', 'FILE wins over SNAPSHOT_PATH, as a flag does')
  t.throws(() => loadConfig({ argv: ['a.json', '--snapshot-path', 'b.json'] }), { name: 'ConfigError', message: 'FILE "a.json" and --snapshot-path both name the snapshot: give one' })
  t.throws(() => loadConfig({ argv: ['a.json', 'b.json'] }), { name: 'ConfigError', message: /^unknown argument "b\.json"/ }, 'one FILE')
  t.throws(() => loadConfig({ argv: ['--port', '1', 'a.json'] }), { name: 'ConfigError', message: /^unknown argument "a\.json"/ }, 'FILE comes first')
})

t.test('OPS_PORT: a port of its own, never PORT', async t => {
  t.throws(() => loadConfig({ env: { PORT: '8080', OPS_PORT: '8080' } }), { message: 'OPS_PORT=8080 is also PORT: the operator\'s pages need a port of their own (or leave OPS_PORT unset to serve them on PORT)' })
  t.equal(loadConfig({ env: { PORT: '0', OPS_PORT: '0' } }).opsPort, 0, 'both any free port: two different ones')
  t.equal(loadConfig({ env: { OPS_PORT: '' } }).opsPort, null, 'empty means unset')
})

t.test('DELAY_MS: a fixed delay, a uniform range or a lognormal median; 0 or empty for none', async t => {
  const delay = (text: string) => loadConfig({ env: { DELAY_MS: text } }).delayMs
  t.same(delay('200'), { kind: 'fixed', ms: 200 })
  t.same(delay(' 100 - 400 '), { kind: 'uniform', min: 100, max: 400 })
  t.same(delay('300-300'), { kind: 'fixed', ms: 300 }, 'a range of one value is that value')
  t.same(delay('~150'), { kind: 'lognormal', median: 150 })
  t.same(delay('600000'), { kind: 'fixed', ms: 600000 })
  for (const none of ['', '0', '0-0']) t.equal(delay(none), null, JSON.stringify(none))
  t.same(loadConfig({ argv: ['--delay-ms', '~80'] }).delayMs, { kind: 'lognormal', median: 80 }, 'also a flag')
  t.equal(loadConfig({ argv: ['--chaos'] }).chaos, true, 'a bare --chaos')
  t.equal(loadConfig({ env: { FAULT: 'reset' } }).faultRate, 1, 'FAULT alone breaks every page answer')
  t.equal(loadConfig({ env: { FAULT: 'reset', FAULT_RATE: '0.25' } }).faultRate, 0.25)
})

t.test('overrides win over everything (tests pass config, not process.env)', async t => {
  t.equal(loadConfig({ env: { PORT: '1' }, argv: ['--port', '2'], overrides: { port: 3 } }).port, 3)
})

t.test('a bad value names the variable or flag, the value and the rule', async t => {
  const bad: Array<[Parameters<typeof loadConfig>[0], RegExp]> = [
    [{ env: { PORT: 'eighty' } }, /^PORT="eighty": must be a whole number from 0 to 65535$/],
    [{ env: { PORT: '70000' } }, /^PORT="70000"/],
    [{ argv: ['--port', '-1'] }, /^--port="-1"/],
    [{ env: { MAX_LIMIT: '0' } }, /^MAX_LIMIT="0": must be a whole number from 1 to 1000000$/],
    [{ env: { TRUST_PROXY: 'maybe' } }, /^TRUST_PROXY="maybe": must be true or false \(also 1\/0, yes\/no, on\/off\)$/],
    [{ env: { SNAPSHOT_URL: 'ftp://x/snapshot.json' } }, /^SNAPSHOT_URL="ftp:\/\/x\/snapshot\.json": ftp: is not a scheme the service follows; SNAPSHOT_URL must be an http:\/\/, https:\/\/ or s3:\/\/bucket\/key URL whose name ends in \.json, \.jsonl or \.ndjson$/],
    [{ env: { SNAPSHOT_URL: 'https://x/snapshot.csv' } }, /^SNAPSHOT_URL=.*must name a \.json, \.jsonl or \.ndjson object/],
    [{ env: { SNAPSHOT_URL: 's3://bucket' } }, /^SNAPSHOT_URL=.*\.json, \.jsonl or \.ndjson/],
    [{ env: { WORKERS: '0' } }, /^WORKERS="0": must be a whole number from 1 to 256, or auto$/],
    [{ env: { MEMORY_LIMIT_MB: '1.5G' } }, /^MEMORY_LIMIT_MB="1.5G": must be a whole number from 64 to 16777216$/],
    [{ env: { MEMORY_LIMIT_MB: '32' } }, /^MEMORY_LIMIT_MB="32": must be a whole number from 64/],
    [{ env: { MEMORY_ESTIMATE_SCALE: '0' } }, /^MEMORY_ESTIMATE_SCALE="0": must be a number from 0.01 to 100 \(1: the measured estimate; below 1 only to test the watch\)$/],
    [{ argv: ['--memory-estimate-scale', 'half'] }, /^--memory-estimate-scale="half": must be a number from 0.01 to 100/],
    [{ env: { PUBLIC_BASE_URL: 'news.example.com' } }, /^PUBLIC_BASE_URL=.*absolute http\(s\) URL/],
    [{ env: { PUBLIC_BASE_URL: 'ftp://x.test' } }, /^PUBLIC_BASE_URL=.*no query, fragment or credentials/],
    [{ env: { PUBLIC_BASE_URL: 'https://x.test/?a=1' } }, /^PUBLIC_BASE_URL=/],
    [{ env: { CORS_ORIGIN: 'app.test' } }, /^CORS_ORIGIN="app.test": "app.test" is not an origin/],
    [{ env: { LOG_LEVEL: 'loud' } }, /^LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent$/],
    [{ env: { HOST: ' ' } }, /^HOST=" ": must not be empty; HOST must be an address or host name$/],
    [{ env: { SNAPSHOT_PATH: '' } }, /^SNAPSHOT_PATH="": must not be empty; SNAPSHOT_PATH must be a file path$/],
    [{ env: { ALLOWED_HOSTS: 'a b' } }, /^ALLOWED_HOSTS="a b": "a b" is not a host name, a .domain or \*; ALLOWED_HOSTS must be a comma-separated list of host names, \.domains or \*$/],
    [{ env: { CACHE_MAX_AGE: 'soon' } }, /^CACHE_MAX_AGE="soon": must be a whole number/],
    [{ env: { SHUTDOWN_GRACE_MS: '0' } }, /^SHUTDOWN_GRACE_MS="0"/],
    [{ env: { MAX_URL_LENGTH: '10' } }, /^MAX_URL_LENGTH="10": must be a whole number from 64 to 65536$/],
    [{ env: { DELAY_MS: 'abc' } }, /^DELAY_MS="abc": must be milliseconds \(200\), a range \(100-400\) or a median \(~150\), from 0 to 600000$/],
    [{ env: { DELAY_MS: '400-100' } }, /^DELAY_MS="400-100": a range goes from the shorter delay to the longer \(100-400\)/],
    [{ env: { DELAY_MS: '~0' } }, /^DELAY_MS="~0": a median must be above 0/],
    [{ env: { DELAY_MS: '600001' } }, /^DELAY_MS="600001": must be milliseconds/],
    [{ env: { DELAY_MS: '-5' } }, /^DELAY_MS="-5": must be milliseconds/],
    [{ argv: ['--delay-ms', '1.5'] }, /^--delay-ms="1.5": must be milliseconds/],
    [{ env: { FAIL_RATE: '2' } }, /^FAIL_RATE="2": must be a number from 0 to 1 \(0\.2: one answer in five\)$/],
    [{ env: { FAIL_RATE: '-0.1' } }, /^FAIL_RATE="-0.1": must be a number from 0 to 1/],
    [{ env: { FAIL_RATE: '20%' } }, /^FAIL_RATE="20%": must be a number from 0 to 1/],
    [{ env: { FAIL_STATUS: '418' } }, /^FAIL_STATUS="418": must be one of 400, 403, 404, 429, 500, 503 /],
    [{ env: { FAULT: 'boom' } }, /^FAULT="boom": must be reset, truncate or dribble$/],
    [{ env: { FAULT: 'reset', FAULT_RATE: '1.5' } }, /^FAULT_RATE="1.5": must be a number from 0 to 1/],
    [{ env: { FAULT_RATE: '0.5' } }, /^FAULT_RATE="0.5" needs FAULT: reset, truncate or dribble$/],
    [{ env: { CHAOS_SEED: 'lucky' } }, /^CHAOS_SEED="lucky": must be a whole number from 0 to 4294967295$/],
    [{ env: { CHAOS: 'maybe' } }, /^CHAOS="maybe": must be true or false \(also 1\/0, yes\/no, on\/off\)$/],
    [{ argv: ['--nope'] }, /^unknown argument "--nope"/],
    [{ argv: ['--port'] }, /^--port needs a value$/]
  ]
  for (const [sources, message] of bad) {
    t.throws(() => loadConfig(sources), { name: 'ConfigError', code: 'CONFIG_ERR_INVALID', message }, String(message))
  }
})

t.test('--help lists every option with its variable', async t => {
  const help = helpText()
  for (const option of OPTIONS) {
    t.match(help, option.flag)
    t.match(help, option.env)
  }
})

t.test('SNAPSHOT_HTTP_HEADERS: `Name: value` a line, or a JSON object', async t => {
  const headers = (text: string, via: 'env' | 'flag' = 'env') => loadConfig(via === 'env' ? { env: { SNAPSHOT_HTTP_HEADERS: text } } : { argv: ['--snapshot-http-headers', text] }).snapshotHttpHeaders
  t.same(headers('Authorization: Bearer abc123'), { Authorization: 'Bearer abc123' })
  t.same(headers('Authorization: Bearer abc123\r\n\r\n  X-Api-Key:k1:k2  \n'), { Authorization: 'Bearer abc123', 'X-Api-Key': 'k1:k2' }, 'CRLF, blank lines, spaces around; a colon in a value')
  t.same(headers('{"Authorization": "Bearer x", "X-Api-Key": "y"}'), { Authorization: 'Bearer x', 'X-Api-Key': 'y' })
  t.same(headers('Authorization: Bearer abc123', 'flag'), { Authorization: 'Bearer abc123' })
  t.equal(headers(''), null)
  t.equal(headers(' \n '), null)
})

t.test('a bad SNAPSHOT_HTTP_HEADERS is refused with the variable\'s name and its rule, never with a value it holds', async t => {
  // [variable or flag, its text, what is wrong]
  const bad: Array<[string, string, string]> = [
    ['SNAPSHOT_HTTP_HEADERS', 'Authorization Bearer abc123', 'line 1 is not `Name: value`'],
    ['--snapshot-http-headers', 'X-Api-Key: k\nBearer abc123', 'line 2 is not `Name: value`'],
    ['SNAPSHOT_HTTP_HEADERS', 'Authorization Bearer: abc123', 'the name on line 1 is not a header name (letters, digits and !#$%&\'*+-.^_`|~)'],
    ['SNAPSHOT_HTTP_HEADERS', ': abc123', 'the name on line 1 is not a header name (letters, digits and !#$%&\'*+-.^_`|~)'],
    ['SNAPSHOT_HTTP_HEADERS', 'Host: abc123.example', 'Host is set by the replica or by HTTP itself: it cannot be given'],
    ['SNAPSHOT_HTTP_HEADERS', 'If-None-Match: "abc123"', 'If-None-Match is set by the replica or by HTTP itself: it cannot be given'],
    ['SNAPSHOT_HTTP_HEADERS', 'X-Api-Key: abc123\nx-api-key: abc123', 'x-api-key is given twice: give each header once'],
    ['SNAPSHOT_HTTP_HEADERS', 'X-Api-Key:', 'X-Api-Key has no value'],
    ['SNAPSHOT_HTTP_HEADERS', 'X-Api-Key: abc123é', 'the value of X-Api-Key must be printable ASCII (percent- or base64-encode anything else)'],
    ['SNAPSHOT_HTTP_HEADERS', 'X-Api-Key: abc\x00123', 'the value of X-Api-Key must be printable ASCII (percent- or base64-encode anything else)'],
    ['SNAPSHOT_HTTP_HEADERS', '{"Authorization": "Bearer abc123', 'is not a JSON object'],
    ['SNAPSHOT_HTTP_HEADERS', '["Authorization: Bearer abc123"]', 'the name on line 1 is not a header name (letters, digits and !#$%&\'*+-.^_`|~)'],
    ['SNAPSHOT_HTTP_HEADERS', '{"Authorization": ["Bearer abc123"]}', 'the value of Authorization must be a string'],
    ['SNAPSHOT_HTTP_HEADERS', '{"Authorization": "Bearer abc123\\r\\nX-Evil: 1"}', 'the value of Authorization must be one line (no CR or LF)'],
    ['SNAPSHOT_HTTP_HEADERS', '{"Bearer abc123": "x"}', 'the JSON object\'s name 1 is not a header name (letters, digits and !#$%&\'*+-.^_`|~)']
  ]
  for (const [name, text, problem] of bad) {
    const sources = name.startsWith('--') ? { argv: [name, text] } : { env: { [name]: text } }
    let message = ''
    t.throws(() => { try { loadConfig(sources) } catch (error) { message = (error as Error).message; throw error } }, { name: 'ConfigError', code: 'CONFIG_ERR_INVALID' }, problem)
    t.ok(message.startsWith(`${name}=`), `${problem}: names ${name}`)
    t.ok(message.includes(`: ${problem}`), `${problem}: says what is wrong (${message})`)
    t.notMatch(message, /abc123/, `${problem}: repeats no value`)
  }
})

t.test('in the shared default cache directory each snapshot keeps its own state; a cache directory given keeps `state`', async t => {
  const a = loadConfig({ env: { SNAPSHOT_PATH: '/srv/a/snapshot.json' } }).stateDir
  const b = loadConfig({ argv: ['/srv/b/snapshot.json'] }).stateDir
  t.not(a, b, 'two demos of two snapshots: a pin of one never reaches the other')
  t.match(a, /explore-replica\/state-[0-9a-f]{12}$/)
  t.equal(loadConfig({ env: { SNAPSHOT_PATH: '/srv/a/snapshot.json' } }).stateDir, a, 'the same snapshot finds its state again')
  const url = loadConfig({ env: { SNAPSHOT_URL: 'https://reader:secret@exports.example/snapshot.jsonl' } }).stateDir
  t.equal(url, loadConfig({ env: { SNAPSHOT_URL: 'https://exports.example/snapshot.jsonl' } }).stateDir, 'a URL\'s credentials are no part of it')
  t.equal(loadConfig({ env: { SNAPSHOT_URL: 'https://exports.example/snapshot.jsonl?sig=one' } }).stateDir, loadConfig({ env: { SNAPSHOT_URL: 'https://exports.example/snapshot.jsonl?sig=two' } }).stateDir, 'nor its query: a new signature keeps the pin and the kept versions')
  t.equal(loadConfig({ env: { SNAPSHOT_CACHE_DIR: '/var/cache/explore-replica' } }).stateDir, '/var/cache/explore-replica/state', 'one replica per given cache directory')
  t.equal(loadConfig({ env: { STATE_DIR: '/var/lib/explore' } }).stateDir, '/var/lib/explore')
})

t.test('the default cache directory is where a user\'s cache belongs: $XDG_CACHE_HOME, else ~/.cache', async t => {
  t.equal(loadConfig({ env: { XDG_CACHE_HOME: '/home/ann/.cache-x' } }).snapshotCacheDir, '/home/ann/.cache-x/explore-replica')
  t.equal(loadConfig({ env: { HOME: '/home/ann' } }).snapshotCacheDir, '/home/ann/.cache/explore-replica')
  t.equal(loadConfig({ env: { HOME: '/home/ann', XDG_CACHE_HOME: 'relative' } }).snapshotCacheDir,
    '/home/ann/.cache/explore-replica', 'a relative XDG_CACHE_HOME is ignored, as the XDG rule says')
  t.match(loadConfig({ env: { HOME: '/home/ann' } }).stateDir, /^\/home\/ann\/\.cache\/explore-replica\/state-[0-9a-f]{12}$/)
})

t.test('REQUEST_JOURNAL=auto: on when HOST is a loopback address (a demo on its own machine), off otherwise', async t => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LocalHost', '::1', '[::1]', '::ffff:127.0.0.1']) {
    t.equal(loadConfig({ env: { HOST: host } }).requestJournal, true, `HOST=${host}: on`)
  }
  for (const host of ['0.0.0.0', '::', '10.0.0.5', 'news.example.com', '128.0.0.1', '127.0.0.1.example.com']) {
    t.equal(loadConfig({ env: { HOST: host } }).requestJournal, false, `HOST=${host}: off`)
  }
  t.equal(loadConfig({ env: { HOST: '0.0.0.0', REQUEST_JOURNAL: 'true' } }).requestJournal, true, 'asked for: on anywhere')
  t.equal(loadConfig({ env: { REQUEST_JOURNAL: 'off' } }).requestJournal, false, 'turned off on a loopback address')
  t.equal(loadConfig({ argv: ['--host', '0.0.0.0', '--request-journal'] }).requestJournal, true, 'a bare --request-journal')
  t.throws(() => loadConfig({ env: { REQUEST_JOURNAL: 'sometimes' } }), { message: 'REQUEST_JOURNAL="sometimes": must be auto, true or false' })
  t.throws(() => loadConfig({ env: { REQUEST_JOURNAL_SIZE: '0' } }), { message: 'REQUEST_JOURNAL_SIZE="0": must be a whole number from 1 to 100000' })
  t.throws(() => loadConfig({ env: { CHAOS_REPLAY: 'random' } }), { message: 'CHAOS_REPLAY="random": must be request or order' })
})

// src/config.ts' rules: a bad value is refused naming its option and rule; --help gives each rule and no path of this machine.
// One bad value for each option: a new option must add its own here.
const BAD: Record<string, string> = {
  PORT: '70000',
  HOST: ' ',
  SNAPSHOT_PATH: '',
  CHANGES_DIR: ' ',
  SNAPSHOT_URL: 'ftp://example.com/snapshot.json',
  SNAPSHOT_HTTP_HEADERS: 'Authorization Bearer x',
  SNAPSHOT_POLL_SECONDS: '0',
  SNAPSHOT_CACHE_DIR: '',
  SNAPSHOT_MAX_MB: 'lots',
  S3_FORCE_PATH_STYLE: 'maybe',
  WORKERS: 'many',
  MEMORY_LIMIT_MB: '32',
  MEMORY_ESTIMATE_SCALE: '0',
  MAX_LIMIT: '-1',
  PUBLIC_BASE_URL: 'ftp://news.example.com',
  TRUST_PROXY: 'sometimes',
  CORS_ORIGIN: 'app.example.com',
  LOG_LEVEL: 'loud',
  WATCH: '2',
  RELOAD_DEBOUNCE_MS: '60001',
  ALLOWED_HOSTS: 'exa mple.com',
  CACHE_MAX_AGE: '1.5',
  METRICS: 'y',
  DOCS: 'n',
  CONSOLE: 'enabled',
  OPS_PORT: '65536',
  OPS_HOST: '',
  OPS_ALLOWED_HOSTS: 'ops internal',
  EXPOSE_OPS_PAGES: 'please',
  OPS_TOKEN: 'short-secret',
  STATE_DIR: ' ',
  KEEP_VERSIONS: '0',
  STATE_PRUNE_DAYS: '-1',
  REQUEST_LOG: 'always',
  LOG_PRETTY: 'pretty',
  SHUTDOWN_GRACE_MS: '0',
  REQUEST_TIMEOUT_MS: 'ten',
  MAX_CONNECTIONS: '0',
  MAX_URL_LENGTH: '10',
  PAGE_CACHE_MB: '65537',
  FAST_PATH: 'fast',
  DELAY_MS: 'slow',
  FAIL_RATE: '1.5',
  FAIL_STATUS: '502',
  FAULT: 'explode',
  FAULT_RATE: '-0.1',
  CHAOS_SEED: '4294967296',
  CHAOS: 'maybe',
  CHAOS_REPLAY: 'arrival',
  REQUEST_JOURNAL: 'sometimes',
  REQUEST_JOURNAL_SIZE: '0'
}

t.test('every option has a bad value to try here', async t => {
  t.same(OPTIONS.map(o => o.env).filter(env => !(env in BAD)), [], 'options without one')
})

for (const option of OPTIONS) {
  const bad = BAD[option.env]
  if (bad === undefined) continue
  t.test(`${option.env}=${JSON.stringify(bad)} is refused, naming ${option.env} and its rule`, async t => {
    for (const [how, sources] of [['variable', { env: { [option.env]: bad } }], ['flag', { argv: [`${option.flag}=${bad}`] }]] as const) {
      const error = t.throws(() => loadConfig(sources), ConfigError, how) as ConfigError
      const name = how === 'variable' ? option.env : option.flag
      t.match(error.message, new RegExp(`^${name}=`), `${how}: names the option first`)
      t.ok(error.message.includes(`must be ${option.rule}`), `${how}: says the rule (${error.message})`)
      if (option.secret === true) t.notOk(error.message.includes(bad), `${how}: never repeats the secret`)
    }
  })
}

/** The number an option takes, without its null. */
function numberOf (schema: TSchema): (TSchema & { minimum?: number, maximum?: number }) | undefined {
  if (KindGuard.IsInteger(schema) || KindGuard.IsNumber(schema)) return schema
  if (KindGuard.IsUnion(schema)) return schema.anyOf.map(numberOf).find(member => member !== undefined)
  return undefined
}

t.test('a number option\'s rule names its schema\'s minimum and maximum; both are taken, a step past either refused', async t => {
  const numbers = OPTIONS.filter(option => numberOf(option.schema) !== undefined)
  t.ok(numbers.length >= 20, `${numbers.length} options`)
  for (const option of numbers) {
    const { minimum, maximum } = numberOf(option.schema) as { minimum: number, maximum: number }
    t.ok(option.rule.includes(`from ${minimum} to ${maximum}`), `${option.env}: its rule (${option.rule}) names ${minimum} and ${maximum}`)
    // FAULT: FAULT_RATE needs it.
    const load = (value: number) => loadConfig({ env: { FAULT: 'reset', [option.env]: String(value) } })[option.key]
    for (const value of [minimum, maximum]) {
      t.ok(Value.Check(option.schema, load(value)), `${option.env}=${value}: taken, and in its schema`)
    }
    const step = KindGuard.IsInteger(numberOf(option.schema)) ? 1 : 0.001
    for (const value of [minimum - step, maximum + step]) {
      t.throws(() => load(value), { name: 'ConfigError', message: `${option.env}=${JSON.stringify(String(value))}: must be ${option.rule}` }, `${option.env}=${value}: refused`)
    }
  }
})

t.test('--help gives each option\'s rule and default, and no path of this machine', async t => {
  const help = helpText()
  for (const option of OPTIONS) {
    const row = help.split('\n').find(line => line.startsWith(`  ${option.flag} / ${option.env}`)) ?? ''
    t.ok(row.includes(`Takes ${option.rule}.`), `${option.env}: its rule`)
  }
  t.notOk(help.includes(BUNDLED_SNAPSHOT), 'not the bundled snapshot\'s absolute path')
  for (const path of [process.cwd(), homedir(), join(tmpdir(), 'explore-replica')]) t.notOk(help.includes(path), `not ${path}`)
  t.match(help, /--version, -v/)
})

t.test('no message repeats a password: SNAPSHOT_URL\'s user:password, or a mistyped option\'s value', async t => {
  for (const text of ['https://reader:s3cret@exports.example/export?fmt=jsonl', 'https://reader:s3cret@exports.example/snapshot.csv', 'not a url://reader:s3cret@x']) {
    const error = t.throws(() => loadConfig({ env: { SNAPSHOT_URL: text } }), ConfigError) as ConfigError
    t.notMatch(error.message, /s3cret|reader/, error.message)
    t.match(error.message, /^SNAPSHOT_URL=/)
  }
  const mistyped = t.throws(() => loadConfig({ argv: ['--ops-tokn=averyveryverysecrettoken'] }), ConfigError) as ConfigError
  t.equal(mistyped.message, 'unknown argument "--ops-tokn" (see --help)')
})

t.test('credentials that cannot apply to SNAPSHOT_URL stop the configuration itself, before anything starts', async t => {
  t.throws(() => loadConfig({ env: { SNAPSHOT_URL: 's3://bucket/snapshot.jsonl', SNAPSHOT_HTTP_HEADERS: 'X-Api-Key: k' } }), { name: 'ConfigError', message: /^SNAPSHOT_HTTP_HEADERS is for an http\(s\):\/\/ SNAPSHOT_URL/ })
  t.throws(() => loadConfig({ env: { SNAPSHOT_URL: 'https://u:p@exports.example/snapshot.jsonl', SNAPSHOT_HTTP_HEADERS: 'Authorization: Bearer x' } }), { name: 'ConfigError', message: /^SNAPSHOT_URL has a user and password/ })
})

t.test('a placeholder OPS_TOKEN is refused, naming the variable and how to make a real one; generated tokens are taken', async t => {
  const placeholders = ['replace-me-with-a-long-secret', 'REPLACE_ME_REPLACE_ME', 'changeme-changeme-changeme', 'my-super-secret-token', '<your-ops-token-here>',
    'your_token_goes_here_1234', 'example-token-0123456789', 'put-a-placeholder-here', 'xxxxxxxxxxxxxxxxxxxxxxxx', 'aaaaaaaaaaaaaaaaaaaa', '$(openssl rand -hex 32)', '$' + '{OPS_TOKEN_FROM_VAULT}', '…………………………………………………………']
  for (const token of placeholders) {
    const error = t.throws(() => loadConfig({ env: { OPS_TOKEN: token } }), ConfigError) as ConfigError
    t.match(error.message, /^OPS_TOKEN=\(hidden\): is a placeholder, not a token: make one with `openssl rand -hex 32`/, token)
    t.notOk(error.message.includes(token), `${token}: not repeated`)
  }
  // Generated tokens from a fixed stream, not a random one: a base64 token holds a placeholder's word by a chance of
  // about 1 in 7 million (special-values.ts), so 4,000 random ones failed about one run in 2,000.
  const bytes = (i: number, kind: string) => createHash('sha256').update(`${kind} ${i}`).digest()
  const uuid = (i: number) => bytes(i, 'uuid').toString('hex').slice(0, 32).replace(/^(.{8})(.{4}).(.{3}).(.{3})(.{12})$/, '$1-$2-4$3-a$4-$5')
  for (let i = 0; i < 2000; i++) {
    for (const token of [bytes(i, 'hex').toString('hex'), bytes(i, 'base64').toString('base64'), bytes(i, 'base64url').toString('base64url'), uuid(i)]) {
      if (loadConfig({ env: { OPS_TOKEN: token } }).opsToken !== token) t.fail(`a generated token refused: ${token}`)
    }
  }
  t.equal(loadConfig({ env: { OPS_TOKEN: 'a-token-for-the-tests-0123456789' } }).opsToken, 'a-token-for-the-tests-0123456789', 'words that are no placeholder\'s')
})

// src/config/declare-option.ts: an option's flag, rule and parser follow from its variable and schema, or it is refused when declared.
t.test('a number option: its flag, its rule from the schema\'s bounds, and its parser', async t => {
  const option = declareOption({ env: 'SOME_LIMIT', schema: Type.Union([Type.Integer({ minimum: 1, maximum: 9 }), Type.Null()]), description: 'd' })
  t.equal(option.flag, '--some-limit')
  t.equal(option.rule, 'a whole number from 1 to 9')
  t.same([option.parse(' 4 '), option.parse('9'), option.parse(' ')], [4, 9, null], 'unset when empty, as it takes null')
  for (const bad of ['0', '10', '4.5', '-1', 'x']) t.throws(() => option.parse(bad), { message: 'must be a whole number from 1 to 9' }, bad)
  const rate = declareOption({ env: 'SOME_RATE', schema: Type.Number({ minimum: 0.5, maximum: 2 }), note: 'an aside', description: 'd' })
  t.same([rate.parse('.5'), rate.parse('2.')], [0.5, 2])
  t.throws(() => rate.parse('2.5'), { message: 'must be a number from 0.5 to 2 (an aside)' }, 'the note after the rule')
  const auto = declareOption({ env: 'SOME_COUNT', schema: Type.Integer({ minimum: 1, maximum: 4 }), auto: () => 2, description: 'd' })
  t.equal(auto.rule, 'a whole number from 1 to 4, or auto', 'an option that takes auto says so')
})

t.test('choices: a short list reads as a sentence, a long one as a list; case does not matter', async t => {
  const choose = (values: string[]) => declareOption({ env: 'SOME_CHOICE', schema: Type.Union(values.map(value => Type.Literal(value))), description: 'd' })
  t.equal(choose(['a', 'b']).rule, 'a or b')
  t.equal(choose(['a', 'b', 'c']).rule, 'a, b or c')
  t.equal(choose(['a', 'b', 'c', 'd']).rule, 'one of a, b, c, d')
  t.equal(choose(['a', 'b']).parse(' B '), 'b')
  t.throws(() => choose(['a', 'b']).parse('c'), { message: 'must be a or b' })
  const statuses = declareOption({ env: 'SOME_STATUS', schema: Type.Union([Type.Literal(404), Type.Literal(503)]), description: 'd' })
  t.equal(statuses.parse('503'), 503, 'a number choice is the number')
})

t.test('a declaration whose schema says no rule, parses no text or leaves a number unbounded is refused, naming it', async t => {
  t.throws(() => declareOption({ env: 'SOME_PATH', schema: Type.String({ minLength: 1 }), description: 'd' }), { name: 'TypeError', message: 'SOME_PATH: its schema says no rule: declare one' })
  t.throws(() => declareOption({ env: 'SOME_LIST', schema: Type.Array(Type.String()), rule: 'a list', description: 'd' }), { name: 'TypeError', message: 'SOME_LIST: its schema parses no text: declare a parser' })
  t.throws(() => declareOption({ env: 'SOME_SIZE', schema: Type.Integer({ minimum: 0 }), description: 'd' }), { name: 'TypeError', message: 'SOME_SIZE: a number declares its minimum and maximum: its rule names them' })
  const list = declareOption({ env: 'SOME_LIST', schema: Type.Array(Type.String()), rule: 'a list', description: 'd', parse: text => text.split(',') })
  t.same(list.parse('a,b'), ['a', 'b'], 'with a parser of its own it is declared')
})
