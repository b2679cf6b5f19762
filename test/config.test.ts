import t from 'tap'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { availableParallelism, homedir } from 'node:os'
import { join } from 'node:path'
import { BUNDLED_SNAPSHOT, helpText, loadConfig, OPTIONS } from '../src/config.js'
import { SecretUrl } from '../src/secret-url.js'

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
