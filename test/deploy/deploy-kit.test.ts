// The deploy kit (deploy/, and what the README and docs/ say of it) checked without Docker, Kubernetes, nginx or systemd; the *.e2e.test.ts beside run them.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { validate } from 'dockerfile-utils'
import { nginxConfig } from '../../bench/nginx-config.js'
import { loadConfig, type Config } from '../../src/config.js'
import { isManifestName, MANIFEST_SUFFIX } from '../../src/schemas/manifest.js'
import { checkImage, checkSettings, CONFIG_NAMES, guideSection, IMAGE, OPERATOR_PORT, PACKAGE, PUBLIC_PORT, ROOT, type SourceFile } from './deploy-rules.js'
import { assignments, execForm, flag, readInstructions, readStages, withoutFlags, words, type Instruction, type Stage } from './dockerfile-instructions.js'
import {
  containersOf, KUBERNETES, parseObjects, readObjects, renderHere, sourcesOf, strategicMerge, yamlFiles,
  type Container, type KubeObject, type PodSpec, type Probe, type Volume
} from './kubernetes-objects.js'
import { NGINX_CONF_TEXT, withPlaceholders, type Placeholders } from './nginx-placeholders.js'

// README.md, docs/ and deploy/ as a whole: package.json's version wherever one is written, and no compose file (the kit ships none).
/** Every text file of deploy/ and docs/, and the README. */
async function kitFiles (): Promise<string[]> {
  const files = [join(ROOT, 'README.md')]
  for (const dir of ['deploy', 'docs']) {
    const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })
    files.push(...entries.filter(entry => entry.isFile() && !/\.(png|jpe?g|gif|svg)$/.test(entry.name)).map(entry => join(entry.parentPath, entry.name)))
  }
  return files.sort()
}

/** The ways this package's version is written: an image tag, npm pack's tarball, --version, the image's ARG, /-/status. */
const VERSION_MENTIONS = [
  /\bexplore-replica:(\d[\w.-]*)/g,
  /\bexplore-replica-(\d+\.\d+\.\d+[\w.-]*?)\.tgz\b/g,
  /\bexplore-replica v?(\d+\.\d+\.\d+)\b/g,
  /\bARG VERSION=(\S+)/g,
  /"version":\s*"(\d+\.\d+\.\d+)"/g,
  /(?<!Node(?:\.js)? )\bversion[ =:]+v?(\d+\.\d+\.\d+)\b/gi
]

/** Each version written in `text`, once (at its offset) however many patterns find it, in order. */
function versionsIn (text: string): Array<{ line: number, version: string }> {
  const found = new Map<number, string>()
  for (const match of VERSION_MENTIONS.flatMap(pattern => [...text.matchAll(pattern)])) {
    found.set(match.index + match[0].lastIndexOf(match[1] as string), match[1] as string)
  }
  return [...found].sort(([a], [b]) => a - b).map(([at, version]) => ({ line: text.slice(0, at).split('\n').length, version }))
}

t.test('every version written in README.md, docs/ and deploy/ is package.json\'s', async t => {
  t.same(versionsIn('docker run explore-replica:9.9.9\nnode dist/server.js --version   # explore-replica 9.9.8\nARG VERSION=9.9.7\nNode version 22.12.0').map(found => found.version),
    ['9.9.9', '9.9.8', '9.9.7'], 'the patterns find a tag, --version and the ARG, and not Node\'s version')
  const found = new Map<string, number>()
  for (const file of await kitFiles()) {
    const where = relative(ROOT, file)
    for (const { line, version } of versionsIn(await readFile(file, 'utf8'))) {
      t.equal(version, PACKAGE.version, `${where}:${line}: ${version} is package.json's version`)
      found.set(where, (found.get(where) ?? 0) + 1)
    }
  }
  // Where the version is known to be written: a pattern that stopped matching would pass everything above.
  for (const where of ['README.md', 'deploy/Dockerfile', 'deploy/kubernetes/base/deployment.yaml', 'docs/guides/deploying.md', 'docs/guides/demo-server.md', 'docs/reference/http-api.md']) {
    t.ok((found.get(where) ?? 0) > 0, `${where}: its version mentions found (${found.get(where) ?? 0})`)
  }
})

t.test('no file in deploy/, docs/ or the README speaks of compose or depends_on: the kit ships no compose file', async t => {
  const files = await kitFiles()
  t.same(files.filter(file => /compose/i.test(relative(ROOT, file))), [], 'no compose file')
  for (const file of files) {
    const lines = (await readFile(file, 'utf8')).split('\n')
    const mentions = lines.flatMap((line, i) => /depends_on|\bcompose\b/i.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])
    t.same(mentions, [], `${relative(ROOT, file)}: no compose`)
  }
})

// deploy/Dockerfile and .dockerignore: linted, and held to the image's rules and every deploy file's (deploy-rules.ts).
const dockerfile = await readFile(join(ROOT, 'deploy', 'Dockerfile'), 'utf8')
const DOCKERFILE: SourceFile = { where: 'deploy/Dockerfile', text: dockerfile }
const stages = readStages(dockerfile)
const runtime = stages.at(-1) as Stage

function all (stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter(instruction => instruction.keyword === keyword)
}

function last (stage: Stage, keyword: string): Instruction | undefined {
  return all(stage, keyword).at(-1)
}

/** The stage's ENV settings, later ones winning. */
function environment (stage: Stage): Map<string, string | undefined> {
  return new Map(all(stage, 'ENV').flatMap(env => [...assignments(env.args)]))
}

/** Where a COPY puts things, made absolute against the stage's WORKDIR at that point. */
function copies (stage: Stage): Array<{ from: string | undefined, sources: string[], dest: string }> {
  let workdir = '/'
  const result: Array<{ from: string | undefined, sources: string[], dest: string }> = []
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = instruction.args
    if (instruction.keyword !== 'COPY') continue
    const parts = words(withoutFlags(instruction.args))
    const dest = parts.at(-1) as string
    result.push({ from: flag(instruction.args, 'from'), sources: parts.slice(0, -1), dest: dest.startsWith('/') ? dest : join(workdir, dest) })
  }
  return result
}

t.test('the Dockerfile has no problem the Docker language server\'s validator finds', async t => {
  t.same(validate(dockerfile).map(problem => `line ${problem.range.start.line + 1}: ${problem.message}`), [])
  t.not(validate('FROM node:24\nHEALTHCHECK --intervall=3s CMD ["node"]\n').length, 0, 'and it does find problems')
})

t.test('multi-stage: the build stage has the dev dependencies and builds; the image only production ones', async t => {
  t.ok(stages.length >= 2, `${stages.length} stages`)
  const build = stages.find(stage => all(stage, 'RUN').some(run => /\bnpm run build\b/.test(run.args)))
  if (build === undefined) return t.fail('no stage runs npm run build')
  t.ok(all(build, 'RUN').some(run => /\bnpm ci\b/.test(run.args) && !/--omit=dev|--production/.test(run.args)), 'the build stage installs every dependency')
  t.not(build, runtime, 'the image is not the build stage')
  // What `npm run build` compiles must be in the build stage: tsconfig.build.json, what it extends, what it includes.
  const tsconfig = JSON.parse(await readFile(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { extends?: string, include: string[] }
  const copied = copies(build).flatMap(copy => copy.sources)
  for (const needed of ['package.json', 'package-lock.json', 'tsconfig.build.json', ...(tsconfig.extends === undefined ? [] : [tsconfig.extends.replace(/^\.\//, '')]), ...tsconfig.include]) {
    t.ok(copied.includes(needed), `the build stage copies ${needed}`)
  }

  // The image's node_modules: installed without dev dependencies, here or in the stage it is copied from.
  const modules = copies(runtime).find(copy => copy.dest === '/app/node_modules')
  const installer = modules?.from === undefined ? runtime : stages.find(stage => stage.name === modules.from)
  t.ok(installer !== undefined && all(installer, 'RUN').some(run => /\bnpm ci\b.*--omit=dev/.test(run.args)), 'node_modules from npm ci --omit=dev')
  t.not(installer, build, 'not the build stage\'s node_modules')
  const dist = copies(runtime).find(copy => copy.dest === '/app/dist')
  t.equal(dist?.from, build.name, 'dist/ from the build stage')
  // dist/ is ES modules only because package.json says "type": "module".
  t.ok(copies(runtime).some(copy => copy.from === undefined && copy.sources.includes('package.json') && copy.dest.startsWith('/app')), 'package.json beside dist/')
})

t.test('the image runs as node, under tini, with SIGTERM, the server directly', async t => {
  t.equal(last(runtime, 'USER')?.args, 'node', 'the node user, not root')
  t.same(execForm(last(runtime, 'ENTRYPOINT')?.args ?? ''), ['/usr/bin/tini', '--'], 'tini is PID 1')
  t.ok(all(runtime, 'RUN').some(run => /apt-get install\b.*\btini\b/.test(run.args)), 'tini installed in the image (Node\'s images have none)')
  t.equal(last(runtime, 'STOPSIGNAL')?.args, 'SIGTERM')
  t.same(execForm(last(runtime, 'CMD')?.args ?? ''), ['node', 'dist/server.js'], 'node itself, no npm or shell between it and the signals')
  t.equal(last(runtime, 'WORKDIR')?.args, '/app')
})

t.test('settings: every interface, /data for snapshots with the sample there until one is mounted', async t => {
  const env = environment(runtime)
  // Held to every deploy file's rules: settings the service knows, the defaults a client sees, the
  // operator's endpoints on OPS_PORT and loopback (the container's published ports are public).
  const config = checkSettings(t, {
    where: 'deploy/Dockerfile ENV',
    settings: Object.fromEntries([...env].map(([name, value]) => [name, value ?? ''])),
    sources: [DOCKERFILE],
    proxyInFront: false,
    podNetwork: false
  })
  t.equal(env.get('HOST'), '0.0.0.0', 'HOST=0.0.0.0: the container\'s network is the boundary')
  t.equal(config?.opsPort, OPERATOR_PORT, `OPS_PORT=${OPERATOR_PORT}: /-/ is not on the published PORT`)
  t.equal(config?.opsHost, '127.0.0.1', 'OPS_HOST=127.0.0.1: the HEALTHCHECK reaches it; outside, only when OPS_HOST is set')
  t.equal(env.get('SNAPSHOT_PATH'), '/data/snapshot.json', 'SNAPSHOT_PATH=/data/snapshot.json')
  t.ok(all(runtime, 'VOLUME').some(volume => (execForm(volume.args) ?? words(volume.args)).includes('/data')), 'VOLUME /data')
  const sample = copies(runtime).filter(copy => copy.from === undefined && copy.sources.includes('data/snapshot.json')).map(copy => copy.dest)
  t.ok(sample.includes('/data/snapshot.json'), 'the bundled sample at SNAPSHOT_PATH')
  t.ok(sample.includes('/app/data/snapshot.json'), 'and where the package keeps it (the default with SNAPSHOT_PATH unset)')
  const exposed = all(runtime, 'EXPOSE').flatMap(expose => words(expose.args).map(port => port.replace(/\/tcp$/, '')))
  t.ok(exposed.includes(String(config?.port ?? PUBLIC_PORT)), `PORT ${config?.port ?? '?'} exposed`)
  t.ok(exposed.includes(String(config?.opsPort ?? '')), `OPS_PORT ${config?.opsPort ?? '?'} exposed`)
  t.same(exposed.filter(port => port !== String(config?.port) && port !== String(config?.opsPort)), [], 'and no other port')
  const cacheDir = env.get('SNAPSHOT_CACHE_DIR')
  t.ok(cacheDir !== undefined && all(runtime, 'RUN').some(run => run.args.includes(cacheDir) && /chown node/.test(run.args)), 'SNAPSHOT_CACHE_DIR is the node user\'s')
})

/** The comment lines before the first instruction: the Dockerfile's own usage. */
function headComment (): string[] {
  const first = readInstructions(dockerfile)[0]?.line ?? 1
  return dockerfile.split('\n').slice(0, first - 1).filter(line => /^#/.test(line) && !/^#\s*syntax=/.test(line)).map(line => line.replace(/^#\s?/, ''))
}

t.test('the one image: the comment at the top builds explore-replica:<package.json version>, and runs that', async t => {
  const commands = headComment().map(line => line.replace(/\s+#.*$/, '').trim()).filter(line => /^docker (build|run)\b/.test(line))
  const build = commands.find(command => command.startsWith('docker build'))
  if (build === undefined) return t.fail('the comment at the top gives the build command')
  const args = words(build).slice(2)
  const option = (name: string): string | undefined => args[args.indexOf(name) + 1]
  t.equal(option('-t'), IMAGE, `docker build … -t ${IMAGE}`)
  t.equal(option('-f'), 'deploy/Dockerfile', 'docker build -f deploy/Dockerfile')
  t.equal(args.at(-1), '.', 'from the checkout\'s root, the context .dockerignore describes')
  const env = environment(runtime)
  for (const run of commands.filter(command => command.startsWith('docker run'))) {
    const parts = words(run)
    t.same(parts.filter(word => /^explore-replica(:|$)/.test(word)), [IMAGE], `${run}: runs ${IMAGE}`)
    for (const name of parts.flatMap((word, i) => word === '-e' ? [(parts[i + 1] ?? '').split('=')[0]] : [])) {
      t.ok(CONFIG_NAMES.has(name ?? ''), `${run}: -e ${name ?? '?'} is one of the service's settings`)
    }
    // Published ports: the container's side is PORT or OPS_PORT, and OPS_PORT answers from outside only off loopback.
    const published = parts.flatMap((word, i) => word === '-p' ? [(parts[i + 1] ?? '').split(':')] : [])
    for (const mapping of published) t.ok([env.get('PORT'), env.get('OPS_PORT')].includes(mapping.at(-1)), `${run}: publishes PORT or OPS_PORT (${mapping.at(-1) ?? '?'})`)
    for (const mapping of published.filter(mapping => mapping.at(-1) === env.get('OPS_PORT'))) {
      t.ok(parts.includes('OPS_HOST=0.0.0.0'), `${run}: OPS_PORT published with OPS_HOST=0.0.0.0, or nothing answers there`)
      t.ok(mapping.length === 3 && mapping[0] === '127.0.0.1', `${run}: OPS_PORT published on the host's loopback only`)
    }
  }
})

t.test('OCI labels: title, description, the package\'s version and licence', async t => {
  const labels = new Map(all(runtime, 'LABEL').flatMap(label => [...assignments(label.args)]))
  const args = new Map(stages.flatMap(stage => all(stage, 'ARG')).flatMap(arg => [...assignments(arg.args)]))
  for (const name of ['title', 'description', 'version', 'revision', 'licenses']) {
    t.ok((labels.get(`org.opencontainers.image.${name}`) ?? '') !== '', `org.opencontainers.image.${name}`)
  }
  t.equal(labels.get('org.opencontainers.image.version'), '$' + '{VERSION}', 'the version is the build argument')
  t.equal(args.get('VERSION'), PACKAGE.version, 'ARG VERSION defaults to package.json\'s version')
  t.equal(labels.get('org.opencontainers.image.licenses'), PACKAGE.license)
})

t.test('.dockerignore sends what the Dockerfile copies and nothing else', async t => {
  const patterns = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
  // The allowlist form only ("*", then "!path" lines): the matcher below is exact for it.
  t.equal(patterns[0], '*', 'everything is excluded first')
  t.ok(patterns.slice(1).every(pattern => /^![^*?[\]]+$/.test(pattern)), 'then plain paths let in')
  const allowed = patterns.slice(1).map(pattern => pattern.slice(1).replace(/\/$/, ''))
  const sent = (path: string): boolean => allowed.some(allow => path === allow || path.startsWith(`${allow}/`))
  const fromContext = stages.flatMap(stage => copies(stage)).filter(copy => copy.from === undefined).flatMap(copy => copy.sources)
  for (const source of fromContext) t.ok(sent(source), `${source} is in the build context`)
  for (const path of ['node_modules/fastify/package.json', 'dist/server.js', '.git/HEAD', 'test/helpers.ts', 'bench/run.ts', 'coverage/index.html', 'README.md']) {
    t.notOk(sent(path), `${path} is not`)
  }
})

t.test('HEALTHCHECK: its timing given, node (the image has no curl) asking /-/readyz on OPS_PORT or PORT', async t => {
  const healthcheck = last(runtime, 'HEALTHCHECK')?.args ?? ''
  for (const name of ['interval', 'timeout', 'start-period', 'retries']) t.ok(flag(healthcheck, name) !== undefined, `--${name} given`)
  t.match(healthcheck, /\/-\/(readyz|healthz)/)
  const command = execForm(/^(?:--\S+\s+)*CMD\s+(.*)$/s.exec(healthcheck)?.[1] ?? '')
  t.equal(command?.[0], 'node', 'an exec form running node (dockerfile.e2e.test.ts runs it against a server)')
  t.match(command?.at(-1), /process\.env\.OPS_PORT \|\| process\.env\.PORT/, 'OPS_PORT when it is set, else PORT')
})

// deploy/kubernetes/: base/ and s3-fleet/, as applied by kubernetes-objects.ts' strategic merge, held to the service's rules.
const MiB = 2 ** 20

// The image's own settings (deploy/Dockerfile's ENV): what a pod starts with before its ConfigMap.
const IMAGE_ENV = environment(runtime)

/** Bytes in a Kubernetes quantity (`160Mi`, `1.5Gi`, `512M`). */
function bytes (quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity)
  if (match === null) throw new Error(`not a quantity of bytes: ${quantity}`)
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[match[2] ?? ''] ?? 1
  return Number(match[1]) * unit
}

function mib (count: number): string {
  return `${Math.ceil(count / MiB)} Mi`
}

function matches (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels?.[key] === value)
}

/**
 * Disk: STATE_DIR keeps the last KEEP_VERSIONS snapshots served as files (a download hard-linked with the
 * cached copy on one file system, an editor's file copied), and holds one more while a new one is kept; with
 * SNAPSHOT_URL, a download in progress is one more file. A kept file is at most what the memory lets the
 * service load (it refuses a file whose load would pass its budget, and a snapshot costs about its file's
 * size in memory) and, with SNAPSHOT_URL, at most SNAPSHOT_MAX_MB. The volumes must hold that, or the
 * kubelet evicts the pod.
 */
function checkDisk (t: Test, objects: KubeObject[], pod: PodSpec, container: Container, config: Config): void {
  const volumeAt = (dir: string): Volume | undefined => {
    const mount = (container.volumeMounts ?? []).filter(m => dir === m.mountPath || dir.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
      .sort((a, b) => b.mountPath.length - a.mountPath.length)[0]
    return mount === undefined ? undefined : pod.volumes?.find(volume => volume.name === mount.name)
  }
  const sizeOf = (volume: Volume): number | undefined => {
    const size = volume.emptyDir?.sizeLimit ??
      volume.ephemeral?.volumeClaimTemplate?.spec?.resources?.requests?.storage ??
      objects.find(object => object.kind === 'PersistentVolumeClaim' && object.metadata.name === volume.persistentVolumeClaim?.claimName)?.spec?.resources?.requests?.storage
    return size === undefined ? undefined : bytes(size)
  }
  const limit = container.resources?.limits?.memory
  const budget = config.memoryLimitMb !== null ? config.memoryLimitMb * MiB : limit !== undefined ? bytes(limit) : Infinity
  const downloadMax = config.snapshotUrl === null ? Infinity : config.snapshotMaxMb * MiB
  const file = Math.min(budget, downloadMax)
  // A manifest's update downloads at most twice SNAPSHOT_MAX_MB (a snapshot and its image, ADR 040).
  const inFlight = config.snapshotUrl === null ? file : /manifest\.json$/.test(config.snapshotUrl.shown) ? 2 * downloadMax : downloadMax
  t.ok(Number.isFinite(file), `a largest snapshot file is known: ${config.snapshotUrl === null ? 'a memory limit' : 'a memory limit or SNAPSHOT_MAX_MB'}`)

  const state = volumeAt(config.stateDir)
  const cache = volumeAt(config.snapshotCacheDir)
  if (state === undefined || cache === undefined) {
    t.fail(`SNAPSHOT_CACHE_DIR ${config.snapshotCacheDir} and STATE_DIR ${config.stateDir} are on volumes`)
    return
  }
  // One volume: the kept versions, each snapshot with its version image (about its size), and what is on its way
  // in. Two: STATE_DIR copies across them.
  const needs: Array<[Volume, number, string]> = state === cache
    ? [[state, config.keepVersions * 2 * file + inFlight, `KEEP_VERSIONS ${config.keepVersions} × 2 × ${mib(file)} (file and image) + ${mib(inFlight)} ${config.snapshotUrl === null ? 'being kept' : 'being downloaded'}`]]
    : [[state, (config.keepVersions * 2 + 1) * file, `(KEEP_VERSIONS ${config.keepVersions} × 2 + 1) × ${mib(file)}`],
        ...(config.snapshotUrl === null ? [] : [[cache, file + inFlight, `the cached copy ${mib(file)} + a download ${mib(inFlight)}`] as [Volume, number, string]])]
  for (const [volume, need, rule] of needs) {
    const size = sizeOf(volume)
    t.ok(size !== undefined && size >= need, `volume ${volume.name} (${size === undefined ? 'no size' : mib(size)}) holds ${rule} = ${mib(need)}`)
  }
}

/** The replicas as applied: one Deployment, its ConfigMap, Service and PodDisruptionBudget, held to the service's rules. */
function checkReplicas (t: Test, where: string, objects: KubeObject[], sources: SourceFile[]): void {
  const deployments = objects.filter(object => object.kind === 'Deployment')
  t.equal(deployments.length, 1, 'one Deployment')
  const deployment = deployments[0] as KubeObject
  const pod = deployment.spec!.template!
  const container = pod.spec.containers.find(c => c.name === 'explore-replica')
  if (container === undefined) {
    t.fail('no explore-replica container')
    return
  }
  checkImage(t, `${where}: the explore-replica container`, container.image)

  // The container's environment: the image's, then its ConfigMaps', then its own env.
  const settings = new Map<string, string>([...IMAGE_ENV].filter((entry): entry is [string, string] => entry[1] !== undefined))
  const configMapped = new Set<string>()
  for (const from of container.envFrom ?? []) {
    const configMap = objects.find(object => object.kind === 'ConfigMap' && object.metadata.name === from.configMapRef?.name)
    if (configMap === undefined) {
      t.fail(`ConfigMap ${from.configMapRef?.name ?? '?'} is not among the manifests`)
      continue
    }
    for (const [name, value] of Object.entries(configMap.data ?? {})) {
      t.equal(typeof value, 'string', `ConfigMap ${configMap.metadata.name}: ${name} is a string, as Kubernetes requires`)
      settings.set(name, String(value))
      configMapped.add(name)
    }
  }
  for (const variable of container.env ?? []) {
    // From a Secret: no value to load, but a name the service must know all the same.
    if (variable.value === undefined) t.ok(CONFIG_NAMES.has(variable.name), `env ${variable.name} is one of the service's settings`)
    else settings.set(variable.name, variable.value)
  }
  // What the service makes of it, held to every deploy file's rules; nothing here puts a proxy in front
  // unless the manifests hold an Ingress.
  const config = checkSettings(t, {
    where,
    settings: Object.fromEntries(settings),
    sources,
    proxyInFront: objects.some(object => object.kind === 'Ingress'),
    podNetwork: true
  })
  if (config === null) return

  // Ports: PORT serves the API; the probes and Prometheus ask the operator's port, on the pod's address.
  const ports = container.ports ?? []
  const portNumber = (port: number | string | undefined): number | undefined => typeof port === 'number' ? port : ports.find(p => p.name === port)?.containerPort ?? (port !== undefined && /^\d+$/.test(port) ? Number(port) : undefined)
  t.ok(ports.some(p => p.containerPort === config.port), `containerPort ${config.port} (PORT)`)
  t.equal(config.opsPort, OPERATOR_PORT, `OPS_PORT=${OPERATOR_PORT}: the probes and metrics are off the Service's port`)
  const probePort = config.opsPort ?? config.port
  if (config.opsPort !== null) {
    t.ok(ports.some(p => p.containerPort === config.opsPort), `containerPort ${config.opsPort} (OPS_PORT)`)
    t.ok(['0.0.0.0', '::'].includes(config.opsHost), `OPS_HOST=${config.opsHost}: the kubelet reaches the pod's address, not its loopback`)
  }
  t.ok(['0.0.0.0', '::'].includes(config.host), `HOST=${config.host}: every interface`)
  const probes: Array<[string, Probe | undefined, string[]]> = [
    ['startupProbe', container.startupProbe, ['/-/healthz', '/-/readyz']],
    ['readinessProbe', container.readinessProbe, ['/-/readyz']],
    ['livenessProbe', container.livenessProbe, ['/-/healthz']]
  ]
  for (const [name, probe, paths] of probes) {
    t.ok(probe?.httpGet !== undefined && paths.includes(probe.httpGet.path), `${name}: ${paths.join(' or ')}`)
    t.equal(portNumber(probe?.httpGet?.port), probePort, `${name} on ${config.opsPort === null ? 'PORT' : 'OPS_PORT'} (${probePort})`)
  }
  const annotations = pod.metadata?.annotations ?? {}
  if (annotations['prometheus.io/scrape'] === 'true') {
    t.equal(portNumber(annotations['prometheus.io/port']), probePort, `prometheus.io/port: the metrics are on ${config.opsPort === null ? 'PORT' : 'OPS_PORT'} (${probePort})`)
    t.equal(annotations['prometheus.io/path'], '/-/metrics', 'prometheus.io/path: /-/metrics')
    t.ok(config.metrics, 'METRICS on')
  }

  // Memory: requested and limited (docs/guides/capacity.md); no more asked than allowed.
  const { requests, limits } = container.resources ?? {}
  t.ok(requests?.memory !== undefined && limits?.memory !== undefined, 'memory requested and limited')
  if (requests?.memory !== undefined && limits?.memory !== undefined) t.ok(bytes(requests.memory) <= bytes(limits.memory), `request ${requests.memory} ≤ limit ${limits.memory}`)
  t.ok(requests?.cpu !== undefined, 'cpu requested')

  // Disk: KEEP_VERSIONS said where the volume's arithmetic can be read, and the volume sized by it.
  t.ok(configMapped.has('KEEP_VERSIONS'), 'KEEP_VERSIONS set in the ConfigMap, not left to the default the volume\'s size depends on')
  checkDisk(t, objects, pod.spec, container, config)

  // Shutdown: the load balancer's delay (preStop) and SHUTDOWN_GRACE_MS within the pod's grace period.
  const preStop = container.lifecycle?.preStop?.exec?.command
  const delay = preStop?.[0] === 'sleep' ? Number(preStop[1]) : 0
  const grace = pod.spec.terminationGracePeriodSeconds ?? 30
  t.ok(grace * 1000 > delay * 1000 + config.shutdownGraceMs, `terminationGracePeriodSeconds ${grace} > preStop ${delay} s + SHUTDOWN_GRACE_MS ${config.shutdownGraceMs} ms`)

  // Not root; a read-only root file system with SNAPSHOT_CACHE_DIR writable.
  t.equal(pod.spec.securityContext?.runAsNonRoot, true, 'runAsNonRoot')
  t.equal(pod.spec.securityContext?.runAsUser, 1000, 'the image\'s node user, by number')
  t.equal(container.securityContext?.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation: false')
  if (container.securityContext?.readOnlyRootFilesystem === true) {
    t.ok(container.volumeMounts?.some(mount => mount.mountPath === config.snapshotCacheDir), `SNAPSHOT_CACHE_DIR ${config.snapshotCacheDir} is a volume`)
  }
  for (const mount of container.volumeMounts ?? []) t.ok(pod.spec.volumes?.some(volume => volume.name === mount.name), `volume ${mount.name} is declared`)
  const account = pod.spec.serviceAccountName
  if (account !== undefined) t.ok(objects.some(object => object.kind === 'ServiceAccount' && object.metadata.name === account), `ServiceAccount ${account} is among the manifests`)

  // The Deployment selects its pods; the Service and the budget select the same ones.
  const labels = pod.metadata?.labels
  t.ok(matches(deployment.spec!.selector?.matchLabels, labels), 'the Deployment selects its pods')
  const service = objects.find(object => object.kind === 'Service')
  t.ok(matches(service?.spec?.selector, labels), 'the Service selects the pods')
  for (const port of service?.spec?.ports ?? []) t.equal(portNumber(port.targetPort), config.port, `Service port ${port.port} → PORT, never the operator's`)
  const budget = objects.find(object => object.kind === 'PodDisruptionBudget')
  t.ok(matches(budget?.spec?.selector?.matchLabels, labels), 'the PodDisruptionBudget covers the pods')
  t.ok(budget?.spec?.maxUnavailable !== undefined || budget?.spec?.minAvailable !== undefined, 'and limits how many a drain takes')
  t.ok((deployment.spec!.replicas ?? 1) >= 2, 'more than one replica, or the budget blocks every drain')
}

t.test('every manifest is YAML that parses without a warning', async t => {
  const files = await yamlFiles(KUBERNETES)
  t.ok(files.length >= 5, `${files.length} files`)
  for (const file of files) t.doesNotThrow(() => readObjects(file), relative(ROOT, file))
  t.throws(() => parseObjects('data:\n  PORT: "3000"\n   OPS_PORT: 1\n', 'bad'), 'and a bad one is refused')
})

t.test('every manifest that names an image names the one image, explore-replica:<package.json version>', async t => {
  const files = await yamlFiles(KUBERNETES)
  let images = 0
  for (const file of files) {
    for (const container of containersOf(readObjects(file))) {
      if (container.image === undefined) continue
      images++
      checkImage(t, `${relative(ROOT, file)}: container ${container.name}`, container.image)
    }
  }
  t.ok(images > 0, `${images} image references`)
})

t.test('base/, as written: the replicas follow the service\'s rules', async t => {
  const dir = join(KUBERNETES, 'base')
  const files = (await yamlFiles(dir)).filter(file => !file.endsWith('kustomization.yaml'))
  checkReplicas(t, 'kubernetes/base as written', files.flatMap(readObjects), [DOCKERFILE, ...sourcesOf(dir)])
})

t.test('base/ and s3-fleet/ as applied (the overlays merged as kustomize does): the replicas follow the service\'s rules', async t => {
  const base = join(KUBERNETES, 'base')
  checkReplicas(t, 'kubernetes/base', renderHere(base), [DOCKERFILE, ...sourcesOf(base)])
  const fleetDir = join(KUBERNETES, 's3-fleet')
  const fleet = renderHere(fleetDir)
  checkReplicas(t, 'kubernetes/s3-fleet', fleet, [DOCKERFILE, ...sourcesOf(fleetDir)])
  const configMap = fleet.find(object => object.kind === 'ConfigMap')
  t.match(configMap?.data?.SNAPSHOT_URL, /^s3:\/\/[^/]+\/.+\.json$/, 'the fleet follows an s3:// object')
  t.ok(typeof configMap?.data?.AWS_REGION === 'string', 'with its region')
  t.ok(configMap?.data?.OPS_PORT !== undefined, 'the base\'s settings kept')
  t.ok(fleet.some(object => object.kind === 'ServiceAccount'), 'and its ServiceAccount')
})

t.test('base/: a NetworkPolicy lets anyone reach the API\'s port, and the operator\'s port only from one namespace', async t => {
  const objects = renderHere(join(KUBERNETES, 'base'))
  const deployment = objects.find(object => object.kind === 'Deployment')!
  const policy = objects.find(object => object.kind === 'NetworkPolicy')
  t.ok(policy !== undefined, 'a NetworkPolicy is applied with the replicas')
  t.ok(matches(policy?.spec?.podSelector?.matchLabels, deployment.spec?.template?.metadata?.labels), 'it selects the replicas\' pods')
  t.same(policy?.spec?.policyTypes, ['Ingress'], 'it limits what comes in')
  const container = containersOf([deployment])[0]!
  const portOf = (port: number | string): number | undefined =>
    typeof port === 'number' ? port : container.ports?.find(named => named.name === port)?.containerPort
  const rules = policy?.spec?.ingress ?? []
  const reaching = (port: number): typeof rules => rules.filter(rule => rule.ports === undefined || rule.ports.some(each => portOf(each.port) === port))
  const data = objects.find(object => object.kind === 'ConfigMap')?.data ?? {}
  const [port, opsPort] = [Number(data.PORT), Number(data.OPS_PORT)]
  t.ok(reaching(port).some(rule => rule.from === undefined), `PORT ${port}: open to every source`)
  const ops = reaching(opsPort)
  t.ok(ops.length > 0, `OPS_PORT ${opsPort}: some may reach it`)
  t.ok(ops.every(rule => (rule.from ?? []).length > 0 && rule.from!.every(source => source.namespaceSelector?.matchLabels !== undefined && source.podSelector === undefined && source.ipBlock === undefined)),
    'only from a named namespace: no rule leaves it open')
})

t.test('the strategic merge merges as kustomize does', async t => {
  t.same(strategicMerge(
    { a: 1, list: [{ name: 'x', v: 1, keep: true }, { name: 'y', v: 2 }], plain: [1, 2], gone: 1 },
    { list: [{ name: 'x', v: 3 }, { name: 'z', v: 4 }], plain: [3], gone: null }
  ), { a: 1, list: [{ name: 'x', v: 3, keep: true }, { name: 'y', v: 2 }, { name: 'z', v: 4 }], plain: [3] })
  const fleet = renderHere(join(KUBERNETES, 's3-fleet'))
  const deployment = fleet.find(object => object.kind === 'Deployment')
  const container = deployment?.spec?.template?.spec.containers[0]
  t.equal(container?.image, readObjects(join(KUBERNETES, 'base', 'deployment.yaml'))[0]?.spec?.template?.spec.containers[0]?.image, 'the base\'s image kept under the patch')
  t.ok(container?.startupProbe !== undefined, 'the base\'s probes kept')
  t.equal(deployment?.spec?.template?.spec.serviceAccountName, 'explore-replica', 'the patch\'s service account added')
})

t.test('OPS_TOKEN comes from the Secret that deploying.md\'s `kubectl create secret` makes, required, in base/ and s3-fleet/', async t => {
  const guide = guideSection('deploying.md', 'Kubernetes')
  const command = /kubectl create secret generic (\S+) --from-literal=([\w.-]+)=\$\(openssl rand -hex (\d+)\)/.exec(guide)
  if (command === null) return t.fail('deploying.md#kubernetes creates the Secret: kubectl create secret generic NAME --from-literal=KEY=$(openssl rand -hex N)')
  const [, name, key, size] = command as unknown as [string, string, string, string]
  const token = randomBytes(Number(size)).toString('hex') // what openssl rand -hex makes
  t.equal(loadConfig({ env: { OPS_TOKEN: token, OPS_PORT: String(OPERATOR_PORT) } }).opsToken, token, `openssl rand -hex ${size}: ${token.length} characters, a token the service takes (at least 16)`)
  for (const dir of ['base', 's3-fleet']) {
    const objects = renderHere(join(KUBERNETES, dir))
    const container = containersOf(objects).find(c => c.name === 'explore-replica')
    const variable = container?.env?.find(v => v.name === 'OPS_TOKEN')
    // Required: a pod without the Secret does not start, rather than start with every action answering 403.
    t.same(variable?.valueFrom, { secretKeyRef: { name, key } }, `${dir}/: OPS_TOKEN from Secret ${name}, key ${key}, not optional`)
    t.notOk(objects.some(object => object.kind === 'Secret'), `${dir}/: no Secret among the manifests: its value is never in the repository`)
  }
})

t.test('s3-fleet/ follows the manifest `publish --to s3://…` writes, as fleets.md and deploying.md say', async t => {
  const url = renderHere(join(KUBERNETES, 's3-fleet')).find(object => object.kind === 'ConfigMap')?.data?.SNAPSHOT_URL
  if (typeof url !== 'string') return t.fail('s3-fleet/ sets SNAPSHOT_URL')
  t.ok(url.endsWith(`/${MANIFEST_SUFFIX}`), `SNAPSHOT_URL ${url} names ${MANIFEST_SUFFIX}, the object publish writes`)
  t.ok(isManifestName(new URL(url).pathname), 'so a replica follows it as a manifest: change files and --step-back reach it')
  // The publish commands fleets.md gives write that very object: publish-to-s3.ts writes the prefix (a
  // folder, with or without its last "/") + MANIFEST_SUFFIX. Not imported: it would load the AWS SDK.
  const fleets = await readFile(join(ROOT, 'docs', 'guides', 'fleets.md'), 'utf8')
  const destinations = new Set([...fleets.matchAll(/publish --to (s3:\/\/[^\s`]+)/g)].map(match => match[1] as string))
  t.ok(destinations.size > 0, 'fleets.md publishes to s3://')
  for (const destination of destinations) {
    t.equal(`${destination.replace(/\/?$/, '/')}${MANIFEST_SUFFIX}`, url, `publish --to ${destination} writes the manifest s3-fleet/ follows`)
  }
  // Where a guide speaks of the overlay, any s3:// URL it gives is that manifest or its publish destination.
  const prefix = url.slice(0, -MANIFEST_SUFFIX.length)
  for (const guide of ['deploying.md', 'fleets.md']) {
    const text = await readFile(join(ROOT, 'docs', 'guides', guide), 'utf8')
    const blocks = text.split(/\n(?=- |\n)/).filter(block => /s3-fleet/.test(block))
    t.ok(blocks.some(block => block.includes(url)), `${guide}: the overlay's SNAPSHOT_URL ${url} is given where it is described`)
    for (const block of blocks) {
      for (const [other] of block.matchAll(/s3:\/\/[^\s`'")]+/g)) {
        t.ok(other === url || other === prefix, `${guide}: ${other}, beside s3-fleet, is the manifest it follows`)
      }
    }
  }
})

// deploy/nginx/explore-replica.conf: the guide shows it as it is, its directives, the test substitution, the bench's proxy.
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

// deploy/explore-replica.service: signals, reload, hardening, writable cache and state, OPS_TOKEN from a root-only file.
const UNIT = join(ROOT, 'deploy', 'explore-replica.service')
const unitText = await readFile(UNIT, 'utf8')

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

const unitService = readUnit(unitText).get('Service') ?? new Map<string, string[]>()
const one = (key: string): string | undefined => unitService.get(key)?.at(-1)

t.test('signals: node itself started, SIGTERM to stop within the grace period, SIGHUP to reload', async t => {
  t.match(one('ExecStart'), /^\/\S*node dist\/server\.js(\s|$)/, 'node dist/server.js: no npm between systemd and the signals')
  t.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID')
  t.equal(one('KillSignal'), 'SIGTERM')
  t.equal(one('Restart'), 'on-failure')
  const config = loadConfig({ env: unitEnvironment() })
  t.ok(Number(one('TimeoutStopSec')) * 1000 > config.shutdownGraceMs, `TimeoutStopSec=${one('TimeoutStopSec') ?? '?'} outlasts SHUTDOWN_GRACE_MS=${config.shutdownGraceMs}`)
})

t.test('a user of its own, no privileges, the file system read-only but for the cache directory', async t => {
  t.ok(one('DynamicUser') === 'yes' || (one('User') ?? 'root') !== 'root', 'DynamicUser=yes or a User= that is not root')
  t.equal(one('NoNewPrivileges'), 'yes')
  t.equal(one('ProtectSystem'), 'strict')
  const cacheDirectory = one('CacheDirectory') ?? one('StateDirectory')
  t.ok(cacheDirectory !== undefined, 'CacheDirectory= (or StateDirectory=): a directory systemd makes writable for it')
  const root = one('CacheDirectory') !== undefined ? '/var/cache' : '/var/lib'
  const config = loadConfig({ env: unitEnvironment() })
  t.equal(config.snapshotCacheDir, `${root}/${cacheDirectory ?? '?'}`, 'SNAPSHOT_CACHE_DIR is that directory')
  t.ok(config.stateDir.startsWith(`${config.snapshotCacheDir}/`), `STATE_DIR ${config.stateDir} in it: the kept versions are written there too`)
  t.equal(one('MemoryDenyWriteExecute'), undefined, 'no MemoryDenyWriteExecute: V8\'s JIT needs it off')
})

t.test('Environment=: settings the service knows, its defaults kept, the operator\'s endpoints on loopback', async t => {
  // Nothing in the unit puts a proxy in front: TRUST_PROXY belongs in the environment file of a machine that has one.
  const config = checkSettings(t, {
    where: 'deploy/explore-replica.service',
    settings: unitEnvironment(),
    sources: [{ where: 'deploy/explore-replica.service', text: unitText }],
    proxyInFront: false,
    podNetwork: false
  })
  t.equal(config?.opsPort, OPERATOR_PORT, `OPS_PORT=${OPERATOR_PORT}`)
  t.equal(config?.opsHost, '127.0.0.1', 'OPS_HOST=127.0.0.1: the console, /-/status and metrics on this machine only')
  // The operator's URLs the unit's comments give use its operator's port.
  for (const [, port] of unitText.matchAll(/^#.*http:\/\/[^/\s:]+:(\d+)\/-\//gm)) t.equal(Number(port), config?.opsPort, `a comment's /-/ URL on OPS_PORT (${port ?? '?'})`)
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
  t.equal(loadConfig({ env: { ...unitEnvironment(), OPS_TOKEN: token } }).opsToken, token, `openssl rand -hex ${write[1] ?? '?'}: ${token.length} characters, a token the service takes (at least 16)`)
  // Without "-": a missing file stops the start, as a missing Secret does a pod, rather than 403 every action.
  t.ok(unitService.get('EnvironmentFile')?.includes(file), `EnvironmentFile=${file}, required`)
  t.notOk('OPS_TOKEN' in unitEnvironment(), 'never in Environment=: a unit file is world-readable')
})

/** The Environment= assignments, later ones winning (systemd splits on spaces; these carry no quotes). */
function unitEnvironment (): Record<string, string> {
  const env: Record<string, string> = {}
  for (const line of unitService.get('Environment') ?? []) {
    for (const word of line.split(/\s+/)) {
      const eq = word.indexOf('=')
      if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1)
    }
  }
  return env
}
