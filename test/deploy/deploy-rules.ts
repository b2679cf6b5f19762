// The rules every file in deploy/ is held to, whatever runs it (the image, the Kubernetes manifests, the
// systemd unit): one image name and tag, settings the service knows, the defaults a client sees kept unless a
// comment says why, the operator's endpoints off the public address, the same two ports everywhere.
// deploy-kit.test.ts calls these on what the Dockerfile, the Kubernetes manifests and the systemd unit each set.
import type { Test } from 'tap'
import { readFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { join } from 'node:path'
import { loadConfig, OPTIONS, S3_ENVIRONMENT, type Config } from '../../src/config.js'

export const ROOT = join(import.meta.dirname, '..', '..')
export const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string, version: string, license: string }

/** The one image every deploy file builds or runs: the package's name and version. */
export const IMAGE = `${PACKAGE.name}:${PACKAGE.version}`

/** Every name a deploy file may set: the service's options and the AWS SDK's settings it documents. */
export const CONFIG_NAMES = new Set<string>([...OPTIONS.map(option => option.env), ...S3_ENVIRONMENT])

/** The API's port and the operator's, the same in every deploy file (the docs' examples use them). */
export const PUBLIC_PORT = 3000
export const OPERATOR_PORT = 9100

const LOOPBACK = ['127.0.0.1', '::1', 'localhost']

/** Options that make a demo server misbehave on purpose: never in a deployment. */
const DEMO_OPTIONS = OPTIONS.filter(option => option.description.startsWith('Demo server:')).map(option => option.env)

/** Options whose value is a secret (OPS_TOKEN, SNAPSHOT_HTTP_HEADERS): never written in a deploy file. */
const SECRET_OPTIONS = OPTIONS.filter(option => option.secret === true).map(option => option.env)

/**
 * Options whose value, away from its default, makes the replica's answers differ from the original API's
 * (a header, a link, a page size, a refusal): set only with a comment above them saying why.
 */
export const CLIENT_VISIBLE = ['CACHE_MAX_AGE', 'TRUST_PROXY', 'PUBLIC_BASE_URL', 'CORS_ORIGIN', 'ALLOWED_HOSTS', 'MAX_LIMIT']

/** A file a setting may be written in: its path (for messages) and its text (for the comments). */
export interface SourceFile {
  where: string
  text: string
}

export interface Deployment {
  /** What is checked, for the messages: `deploy/explore-replica.service`, `kubernetes/s3-fleet`… */
  where: string
  /** The environment the service starts with, as the files give it. */
  settings: Record<string, string>
  /** The files that set it, in the order they apply: a setting's comment is read where it is set last. */
  sources: SourceFile[]
  /** A proxy that sets X-Forwarded-* is put in front of the replica by these files themselves (an Ingress). */
  proxyInFront: boolean
  /**
   * The operator's listener may be on the pod's address (a kubelet probes it there) rather than loopback,
   * with a comment above OPS_HOST naming the NetworkPolicy that keeps other workloads off it.
   */
  podNetwork: boolean
}

/** Whether a (non-comment) line sets `name`: `NAME: value` (YAML), `name: NAME` (a container's env), `NAME=value` (ENV, Environment=). */
function sets (line: string, name: string): boolean {
  if (/^\s*[#;]/.test(line)) return false
  const escaped = name.replace(/[$()*+.?[\\\]^{|}]/g, '\\$&')
  return new RegExp(`^\\s*(?:-\\s+)?${escaped}:|(?:^|[\\s{,])name:\\s*["']?${escaped}["']?\\s*(?:[,}]|$)|(?:^|[\\s"'=])${escaped}=`).test(line)
}

/**
 * The comment directly above line `index`: the comment lines before it, after stepping back over the lines
 * of the same instruction (a Dockerfile's ENV continued with `\`). Empty when there is none.
 */
export function commentAbove (lines: readonly string[], index: number): string {
  let i = index - 1
  while (i >= 0 && /\\\s*$/.test(lines[i] as string) && !/^\s*#/.test(lines[i] as string)) i--
  const comment: string[] = []
  for (; i >= 0 && /^\s*[#;]/.test(lines[i] as string); i--) comment.unshift((lines[i] as string).replace(/^\s*[#;]\s?/, ''))
  return comment.join('\n')
}

/** Where `name` is set last among `sources`, and the comment directly above it there; null when none sets it. */
export function settingComment (sources: readonly SourceFile[], name: string): { where: string, line: number, comment: string } | null {
  for (const source of [...sources].reverse()) {
    const lines = source.text.split('\n')
    const index = lines.findLastIndex(line => sets(line, name))
    if (index >= 0) return { where: source.where, line: index + 1, comment: commentAbove(lines, index) }
  }
  return null
}

/** The option of an environment variable (undefined for the AWS SDK's own settings). */
function optionOf (name: string): (typeof OPTIONS)[number] | undefined {
  return OPTIONS.find(option => option.env === name)
}

/**
 * Holds one deployment's settings to the rules every deploy file shares, and returns the configuration the
 * service makes of them (null when they do not load).
 */
export function checkSettings (t: Test, deployment: Deployment): Config | null {
  const { where, settings, sources } = deployment
  const names = Object.keys(settings)
  t.ok(names.length > 0, `${where}: settings given`)
  for (const name of names) t.ok(CONFIG_NAMES.has(name), `${where}: ${name} is one of the service's settings (docs/reference/configuration.md)`)
  for (const name of names.filter(name => DEMO_OPTIONS.includes(name))) t.fail(`${where}: ${name} is a demo server's trouble, never a deployment's`)
  // A secret written in a deploy file is in the repository, and readable wherever the file is (a unit, a ConfigMap).
  for (const name of names.filter(name => SECRET_OPTIONS.includes(name))) t.fail(`${where}: ${name} is a secret: given from a Secret or a root-only file, never written here`)

  let config: Config
  try {
    config = loadConfig({ env: settings })
  } catch (error) {
    t.fail(`${where}: the settings load: ${(error as Error).message}`)
    return null
  }

  // The defaults keep the replica indistinguishable from the original: a change a client sees says why.
  for (const name of CLIENT_VISIBLE.filter(name => name in settings)) {
    const option = optionOf(name)
    if (option === undefined) continue
    const { [name]: _, ...without } = settings
    if (isDeepStrictEqual(config[option.key], loadConfig({ env: without })[option.key])) continue
    const found = settingComment(sources, name)
    t.ok(found !== null && found.comment.includes(name), `${where}: ${name}=${settings[name] ?? ''} changes what clients see, so the comment above it (${found?.where ?? '?'}:${found?.line ?? '?'}) names it and says why`)
  }
  // X-Forwarded-* believed only from a proxy these files put in front: anyone else could forge the links' host.
  if (config.trustProxy) t.ok(deployment.proxyInFront, `${where}: TRUST_PROXY only where the files put a proxy that sets X-Forwarded-* in front (an Ingress)`)

  // The same two ports everywhere; the operator's endpoints (/-/: console, status, metrics, actions) on the
  // operator's port, never on an address the public reaches.
  t.equal(config.port, PUBLIC_PORT, `${where}: PORT=${PUBLIC_PORT}, as every deploy file`)
  if (!LOOPBACK.includes(config.host)) {
    t.equal(config.opsPort, OPERATOR_PORT, `${where}: HOST=${config.host} listens publicly, so OPS_PORT=${OPERATOR_PORT} takes the /-/ endpoints off it`)
    if (LOOPBACK.includes(config.opsHost)) {
      t.pass(`${where}: OPS_HOST=${config.opsHost}: the operator's port on loopback`)
    } else {
      const found = settingComment(sources, 'OPS_HOST')
      t.ok(deployment.podNetwork && found !== null && /NetworkPolicy/.test(found.comment),
        `${where}: OPS_HOST=${config.opsHost} is loopback, or the pod's own address with the comment above it naming the NetworkPolicy that keeps others off it`)
    }
  } else if (config.opsPort !== null) {
    t.equal(config.opsPort, OPERATOR_PORT, `${where}: OPS_PORT=${OPERATOR_PORT}, as every deploy file`)
  }
  return config
}

/** An image reference is the one image: `explore-replica:<package.json version>`. */
export function checkImage (t: Test, where: string, image: string | undefined): void {
  t.equal(image, IMAGE, `${where}: image ${IMAGE} (package.json's name and version)`)
}

/** A guide's section: from its `## heading` line to the next `## ` heading (docs/guides/<file>). */
export function guideSection (file: string, heading: string): string {
  const text = readFileSync(join(ROOT, 'docs', 'guides', file), 'utf8')
  const start = text.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`docs/guides/${file} has no section "## ${heading}"`)
  const end = text.indexOf('\n## ', start + 1)
  return text.slice(start, end < 0 ? undefined : end)
}
