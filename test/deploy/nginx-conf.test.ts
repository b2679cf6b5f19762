// deploy/nginx/explore-replica.conf without starting nginx (nginx-tls.e2e.test.ts does): the guide shows it as
// it is, it has the directives TRUST_PROXY=true and keep-alive need, the test substitution changes only its
// placeholder lines, and the bench's plain-HTTP proxy (bench/nginx-config.ts) proxies with the same directives.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { nginxConfig } from '../../bench/nginx-config.js'
import { ROOT } from './deploy-rules.js'
import { NGINX_CONF_TEXT, withPlaceholders, type Placeholders } from './nginx-placeholders.js'

const GUIDE = join(ROOT, 'docs', 'guides', 'deploying.md')

/** A configuration's directives, comments and indentation dropped, one per line. */
function directives (conf: string): string[] {
  return conf.split('\n').map(line => line.replace(/#.*$/, '').trim()).filter(line => line !== '')
}

const VALUES: Placeholders = { httpPort: 8080, httpsPort: 8443, certificate: '/tmp/x/cert.pem', key: '/tmp/x/key.pem', upstreams: ['127.0.0.1:3001', '127.0.0.1:3002'] }

t.test('docs/guides/deploying.md shows the file as it is', async t => {
  const guide = readFileSync(GUIDE, 'utf8')
  const start = guide.indexOf('\n## Behind nginx')
  t.not(start, -1, 'the guide has its "Behind nginx" section')
  const end = guide.indexOf('\n## ', start + 1)
  const section = guide.slice(start, end < 0 ? undefined : end)
  const block = /\n```nginx\n([\s\S]*?\n)```\n/.exec(section)
  t.ok(block, 'the section has an nginx block')
  t.equal(block?.[1], NGINX_CONF_TEXT, 'the block is deploy/nginx/explore-replica.conf, byte for byte')
  t.match(section, 'deploy/nginx/explore-replica.conf', 'and names the file')
})

t.test('the directives links, compression and keep-alive need', async t => {
  const lines = directives(NGINX_CONF_TEXT)
  for (const directive of [
    'proxy_set_header X-Forwarded-Proto $scheme;',
    'proxy_set_header X-Forwarded-Host $host;',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    'proxy_set_header Host $host;',
    'proxy_http_version 1.1;',
    'proxy_set_header Connection "";',
    'keepalive 32;',
    'gzip on;',
    'gzip_types application/json;',
    'listen 443 ssl http2;'
  ]) t.ok(lines.includes(directive), directive)
})

t.test('the test substitution changes the placeholder lines only, and refuses an unmarked operator value', async t => {
  const before = NGINX_CONF_TEXT.split('\n')
  const after = withPlaceholders(NGINX_CONF_TEXT, VALUES).split('\n')
  t.equal(after.length, before.length)
  const changed = before.flatMap((line, i) => line === after[i] ? [] : [line])
  t.ok(changed.length > 0 && changed.every(line => line.includes('# placeholder')), 'every changed line is a placeholder')
  const runnable = directives(after.join('\n'))
  for (const directive of ['listen 127.0.0.1:8080;', 'listen 127.0.0.1:8443 ssl http2;', 'ssl_certificate /tmp/x/cert.pem;',
    'ssl_certificate_key /tmp/x/key.pem;', 'server 127.0.0.1:3001 max_fails=2 fail_timeout=10s;', 'server 127.0.0.1:3002 max_fails=2 fail_timeout=10s;']) {
    t.ok(runnable.includes(directive), directive)
  }
  t.throws(() => withPlaceholders(NGINX_CONF_TEXT.replace('listen 80;  # placeholder: the public HTTP port', 'listen 80;'), VALUES),
    /not marked "# placeholder"/)
  t.throws(() => withPlaceholders(NGINX_CONF_TEXT, { ...VALUES, upstreams: ['127.0.0.1:3001'] }), /more upstream servers/)
})

t.test('the bench\'s plain-HTTP proxy passes requests upstream with the file\'s directives', async t => {
  // Its upstream and location lines, an address stood for by the file's first: TLS, gzip and X-Forwarded-*
  // are the file's alone (the bench measures the replicas, not nginx's TLS or compression).
  const bench = directives(nginxConfig('/tmp/bench', 8080, [3001]))
  const proxying = bench.filter(line => /^(server \d|keepalive |proxy_(?!temp_path))/.test(line))
  t.ok(proxying.length >= 6, 'the bench has upstream and proxy directives')
  const ours = directives(withPlaceholders(NGINX_CONF_TEXT, VALUES))
  for (const line of proxying) t.ok(ours.includes(line), `${line} is in deploy/nginx/explore-replica.conf`)
})
