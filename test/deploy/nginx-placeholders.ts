// deploy/nginx/explore-replica.conf made runnable by a test: the lines it marks "# placeholder" replaced (its
// listen ports moved to loopback, a test certificate, the replicas the test started), every other line run as
// shipped, included by a main configuration that keeps nginx in the foreground with its files in one directory.
// nginx-tls.e2e.test.ts runs it; deploy-kit.test.ts checks the substitution covers every placeholder.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './deploy-rules.js'
import { mainConfig as benchMainConfig } from '../../bench/nginx-config.js'

export const NGINX_CONF = join(ROOT, 'deploy', 'nginx', 'explore-replica.conf')
export const NGINX_CONF_TEXT = readFileSync(NGINX_CONF, 'utf8')

/** The host name the file's placeholders name: a test sends it as Host (and SNI) to loopback. */
export const PUBLIC_HOST = 'news.example.com'

export interface Placeholders {
  /** Where the file's `listen 80` and `listen 443` go, on 127.0.0.1. */
  httpPort: number
  httpsPort: number
  certificate: string
  key: string
  /** host:port of each replica, in the order of the file's upstream `server` lines (one each). */
  upstreams: string[]
}

const MARK = /\s+# placeholder\b.*$/

/** An upstream `server host:port …;` line (not a `server {` block). */
const UPSTREAM_SERVER = /^(\s*)server\s+(?!\{)(\S+)(.*;)$/

/**
 * The file with each "# placeholder" line replaced as `values` says; throws on a marked line it does not know
 * and on a listen, certificate or upstream line left unmarked (the test would not be running the file's own).
 */
export function withPlaceholders (conf: string, values: Placeholders): string {
  const upstreams = [...values.upstreams]
  const out = conf.split('\n').map((line, index) => {
    const where = `explore-replica.conf:${index + 1}`
    if (!MARK.test(line)) {
      if (/^\s*(listen|ssl_certificate|ssl_certificate_key)\s/.test(line) || UPSTREAM_SERVER.test(line)) {
        throw new Error(`${where}: "${line.trim()}" is an operator's value but not marked "# placeholder"`)
      }
      return line
    }
    const directive = line.replace(MARK, '')
    const listen = /^(\s*)listen\s+(\d+)\b(.*)$/.exec(directive)
    if (listen !== null) {
      const port = { 80: values.httpPort, 443: values.httpsPort }[Number(listen[2])]
      if (port === undefined) throw new Error(`${where}: listen on ${listen[2]}, neither 80 nor 443`)
      return `${listen[1]}listen 127.0.0.1:${port}${listen[3]}`
    }
    const certificate = /^(\s*)(ssl_certificate(?:_key)?)\s+\S+;$/.exec(directive)
    if (certificate !== null) {
      return `${certificate[1]}${certificate[2]} ${certificate[2] === 'ssl_certificate' ? values.certificate : values.key};`
    }
    // The test sends the file's own host name: kept.
    if (/^\s*server_name\s/.test(directive)) return directive
    const upstream = UPSTREAM_SERVER.exec(directive)
    if (upstream !== null) {
      const address = upstreams.shift()
      if (address === undefined) throw new Error(`${where}: more upstream servers than the ${values.upstreams.length} replicas given`)
      return `${upstream[1]}server ${address}${upstream[3]}`
    }
    throw new Error(`${where}: a placeholder this substitution does not know: ${line.trim()}`)
  })
  if (upstreams.length > 0) throw new Error(`${upstreams.length} replica(s) left over: the file has fewer upstream servers`)
  return out.join('\n')
}

/**
 * A main configuration including `included`, startable by any user: in the foreground, pid, temp files and
 * error log in `dir` (stderr for the log, so a failed start says why).
 */
export function mainConfig (dir: string, included: string): string {
  return benchMainConfig(dir, `  include ${included};`, { errorLog: 'stderr', connections: 64 })
}
