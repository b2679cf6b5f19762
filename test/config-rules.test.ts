// Every option refuses a bad value with a message that names it and says its rule; --help shows each rule
// and no path of this machine.
import t from 'tap'
import { KindGuard, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { randomBytes, randomUUID } from 'node:crypto'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from '../src/errors.js'
import { BUNDLED_SNAPSHOT, helpText, loadConfig, OPTIONS } from '../src/config.js'

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
  for (let i = 0; i < 2000; i++) {
    for (const token of [randomBytes(32).toString('hex'), randomBytes(32).toString('base64'), randomBytes(32).toString('base64url'), randomUUID()]) {
      if (loadConfig({ env: { OPS_TOKEN: token } }).opsToken !== token) t.fail(`a generated token refused: ${token}`)
    }
  }
  t.equal(loadConfig({ env: { OPS_TOKEN: 'a-token-for-the-tests-0123456789' } }).opsToken, 'a-token-for-the-tests-0123456789', 'words that are no placeholder\'s')
})
