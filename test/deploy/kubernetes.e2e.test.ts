// deploy/kubernetes/: every manifest parses and runs the one image; the replicas as applied (base/, and
// s3-fleet/ on top of it: rendered by kubectl kustomize where it is installed, else by the strategic merge
// below) are checked against the service itself: every variable is one of its settings and loads, with the
// rules every deploy file shares (deploy-rules.ts), the probes and Prometheus ask the operator's port for
// /-/healthz, /-/readyz and /-/metrics, the Service sends to PORT, memory is requested and limited, the
// cache volume holds the versions kept, shutdown fits in the grace period.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { parseAllDocuments, parse as parseYaml } from 'yaml'
import type { Config } from '../../src/config.js'
import { assignments, readStages } from './dockerfile-instructions.js'
import { checkImage, checkSettings, CONFIG_NAMES, OPERATOR_PORT, ROOT, type SourceFile } from './deploy-rules.js'

const KUBERNETES = join(ROOT, 'deploy', 'kubernetes')
const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find(path => existsSync(path))
const MiB = 2 ** 20

// The image's own settings (deploy/Dockerfile's ENV): what a pod starts with before its ConfigMap.
const DOCKERFILE: SourceFile = { where: 'deploy/Dockerfile', text: await readFile(join(ROOT, 'deploy', 'Dockerfile'), 'utf8') }
const IMAGE_ENV = new Map(readStages(DOCKERFILE.text).at(-1)!.instructions
  .filter(instruction => instruction.keyword === 'ENV').flatMap(env => [...assignments(env.args)]))

// Only what these tests read of the Kubernetes objects.
interface Probe { httpGet?: { path: string, port: number | string } }
interface Container {
  name: string
  image?: string
  env?: Array<{ name: string, value?: string, valueFrom?: unknown }>
  envFrom?: Array<{ configMapRef?: { name: string } }>
  ports?: Array<{ name?: string, containerPort: number }>
  startupProbe?: Probe
  readinessProbe?: Probe
  livenessProbe?: Probe
  lifecycle?: { preStop?: { exec?: { command: string[] } } }
  resources?: { requests?: Record<string, string>, limits?: Record<string, string> }
  securityContext?: { readOnlyRootFilesystem?: boolean, allowPrivilegeEscalation?: boolean }
  volumeMounts?: Array<{ name: string, mountPath: string }>
}
interface Volume {
  name: string
  emptyDir?: { sizeLimit?: string } | null
  ephemeral?: { volumeClaimTemplate?: { spec?: { resources?: { requests?: { storage?: string } } } } }
  persistentVolumeClaim?: { claimName: string }
}
interface PodSpec {
  containers: Container[]
  initContainers?: Container[]
  terminationGracePeriodSeconds?: number
  serviceAccountName?: string
  securityContext?: { runAsNonRoot?: boolean, runAsUser?: number }
  volumes?: Volume[]
}
interface KubeObject {
  apiVersion: string
  kind: string
  metadata: { name: string }
  data?: Record<string, unknown>
  spec?: {
    replicas?: number
    selector?: { matchLabels?: Record<string, string> } & Record<string, string>
    ports?: Array<{ port: number, targetPort: number | string }>
    maxUnavailable?: number
    minAvailable?: number
    resources?: { requests?: { storage?: string } }
    template?: {
      metadata?: { labels?: Record<string, string>, annotations?: Record<string, string> }
      spec: PodSpec
    }
  }
}
interface Kustomization {
  resources?: string[]
  patches?: Array<{ path?: string }>
  patchesStrategicMerge?: string[]
}

async function yamlFiles (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter(entry => entry.isFile() && /\.ya?ml$/.test(entry.name)).map(entry => join(entry.parentPath, entry.name)).sort()
}

function parseObjects (text: string, where: string): KubeObject[] {
  return parseAllDocuments(text).map(document => {
    if (document.errors.length > 0 || document.warnings.length > 0) throw new Error(`${where}: ${[...document.errors, ...document.warnings].map(e => e.message).join('; ')}`)
    return document.toJS() as KubeObject
  }).filter(object => object !== null)
}

function readObjects (file: string): KubeObject[] {
  return parseObjects(readFileSync(file, 'utf8'), relative(ROOT, file))
}

async function kustomize (dir: string): Promise<KubeObject[]> {
  const output = await new Promise<string>((resolve, reject) => {
    execFile(KUBECTL as string, ['kustomize', dir], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kubectl kustomize ${relative(ROOT, dir)}: ${stderr}`))
      else resolve(stdout)
    })
  })
  return parseObjects(output, `kubectl kustomize ${relative(ROOT, dir)}`)
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A strategic merge patch as kustomize applies these overlays: maps merged key by key, lists of named
 * entries (containers, volumes, env, ports) merged by name, anything else replaced; null removes a key.
 */
function strategicMerge (base: unknown, patch: unknown): unknown {
  const named = (list: unknown[]): boolean => list.every(item => isObject(item) && typeof item.name === 'string')
  if (Array.isArray(base) && Array.isArray(patch) && named(base) && named(patch)) {
    const merged = [...base] as Array<Record<string, unknown>>
    for (const item of patch as Array<Record<string, unknown>>) {
      const at = merged.findIndex(entry => entry.name === item.name)
      if (at < 0) merged.push(item)
      else merged[at] = strategicMerge(merged[at], item) as Record<string, unknown>
    }
    return merged
  }
  if (isObject(base) && isObject(patch)) {
    const merged: Record<string, unknown> = { ...base }
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key]
      else merged[key] = strategicMerge(base[key], value)
    }
    return merged
  }
  return patch
}

/**
 * A kustomization's objects without kubectl: its resources (files, and directories rendered in turn), then
 * its strategic merge patches, each applied to the object of its kind and name. Enough for these overlays;
 * kubectl kustomize is used where it is installed.
 */
function renderHere (dir: string): KubeObject[] {
  const kustomization = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization
  const objects = (kustomization.resources ?? []).flatMap(resource => {
    const path = join(dir, resource)
    return existsSync(join(path, 'kustomization.yaml')) ? renderHere(path) : readObjects(path)
  })
  const patches = [...(kustomization.patches ?? []).map(patch => patch.path), ...(kustomization.patchesStrategicMerge ?? [])]
  for (const path of patches) {
    if (path === undefined) throw new Error(`${relative(ROOT, dir)}: only patches given by path are rendered here`)
    for (const patch of readObjects(join(dir, path))) {
      const at = objects.findIndex(object => object.kind === patch.kind && object.metadata.name === patch.metadata.name)
      if (at < 0) throw new Error(`${relative(ROOT, join(dir, path))}: no ${patch.kind} ${patch.metadata.name} to patch`)
      objects[at] = strategicMerge(objects[at], patch) as KubeObject
    }
  }
  return objects
}

/** The files a kustomization is made of, the resources' before its own: where its settings' comments are. */
function sourcesOf (dir: string): SourceFile[] {
  const kustomization = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization
  const own = [...(kustomization.resources ?? []), ...(kustomization.patches ?? []).map(patch => patch.path ?? ''), ...(kustomization.patchesStrategicMerge ?? [])]
  return own.filter(resource => resource !== '').flatMap(resource => {
    const path = join(dir, resource)
    if (existsSync(join(path, 'kustomization.yaml'))) return sourcesOf(path)
    return [{ where: relative(ROOT, path), text: readFileSync(path, 'utf8') }]
  })
}

async function render (dir: string): Promise<KubeObject[]> {
  return KUBECTL === undefined ? renderHere(dir) : await kustomize(dir)
}

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

/** Every container of every pod template among these objects. */
function containersOf (objects: KubeObject[]): Container[] {
  return objects.flatMap(object => [...(object.spec?.template?.spec.containers ?? []), ...(object.spec?.template?.spec.initContainers ?? [])])
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
  const inFlight = config.snapshotUrl === null ? file : downloadMax
  t.ok(Number.isFinite(file), `a largest snapshot file is known: ${config.snapshotUrl === null ? 'a memory limit' : 'a memory limit or SNAPSHOT_MAX_MB'}`)

  const state = volumeAt(config.stateDir)
  const cache = volumeAt(config.snapshotCacheDir)
  if (state === undefined || cache === undefined) {
    t.fail(`SNAPSHOT_CACHE_DIR ${config.snapshotCacheDir} and STATE_DIR ${config.stateDir} are on volumes`)
    return
  }
  // One volume: the kept versions and what is on its way in. Two: STATE_DIR copies across them.
  const needs: Array<[Volume, number, string]> = state === cache
    ? [[state, config.keepVersions * file + inFlight, `KEEP_VERSIONS ${config.keepVersions} × ${mib(file)} + ${mib(inFlight)} ${config.snapshotUrl === null ? 'being kept' : 'being downloaded'}`]]
    : [[state, (config.keepVersions + 1) * file, `(KEEP_VERSIONS ${config.keepVersions} + 1) × ${mib(file)}`],
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

t.test(`base/ and s3-fleet/ as applied (${KUBECTL === undefined ? 'kubectl is not installed: the overlays merged here as kustomize does' : 'kubectl kustomize'})`, async t => {
  const base = join(KUBERNETES, 'base')
  checkReplicas(t, 'kubernetes/base', await render(base), [DOCKERFILE, ...sourcesOf(base)])
  const fleetDir = join(KUBERNETES, 's3-fleet')
  const fleet = await render(fleetDir)
  checkReplicas(t, 'kubernetes/s3-fleet', fleet, [DOCKERFILE, ...sourcesOf(fleetDir)])
  const configMap = fleet.find(object => object.kind === 'ConfigMap')
  t.match(configMap?.data?.SNAPSHOT_URL, /^s3:\/\/[^/]+\/.+\.(json|jsonl|ndjson)$/, 'the fleet follows an s3:// snapshot')
  t.ok(typeof configMap?.data?.AWS_REGION === 'string', 'with its region')
  t.ok(configMap?.data?.OPS_PORT !== undefined, 'the base\'s settings kept')
  t.ok(fleet.some(object => object.kind === 'ServiceAccount'), 'and its ServiceAccount')
})

t.test('the strategic merge used without kubectl merges as kustomize does', async t => {
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
  if (KUBECTL === undefined) return
  const byKindAndName = (objects: KubeObject[]): KubeObject[] => [...objects].sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`))
  for (const dir of ['base', 's3-fleet']) {
    t.same(byKindAndName(renderHere(join(KUBERNETES, dir))), byKindAndName(await kustomize(join(KUBERNETES, dir))), `${dir}/: the same objects as kubectl kustomize`)
  }
})
