// deploy/kubernetes/: every manifest parses and runs the one image; the replicas as applied (base/, and
// s3-fleet/ on top of it, rendered by the strategic merge of kubernetes-objects.ts, which
// kubernetes.e2e.test.ts compares with kubectl kustomize) are checked against the service itself: every
// variable is one of its settings and loads, with the rules every deploy file shares (deploy-rules.ts), the
// probes and Prometheus ask the operator's port for /-/healthz, /-/readyz and /-/metrics, the Service sends
// to PORT, memory is requested and limited, the cache volume holds the versions kept, shutdown fits in the
// grace period, OPS_TOKEN comes from the Secret the guide creates, and the S3 fleet follows a manifest.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { loadConfig, type Config } from '../../src/config.js'
import { isManifestName, MANIFEST_SUFFIX } from '../../src/schemas/manifest.js'
import { assignments, readStages } from './dockerfile-instructions.js'
import { checkImage, checkSettings, CONFIG_NAMES, guideSection, OPERATOR_PORT, ROOT, type SourceFile } from './deploy-rules.js'
import {
  containersOf, KUBERNETES, parseObjects, readObjects, renderHere, sourcesOf, strategicMerge, yamlFiles,
  type Container, type KubeObject, type PodSpec, type Probe, type Volume
} from './kubernetes-objects.js'

const MiB = 2 ** 20

// The image's own settings (deploy/Dockerfile's ENV): what a pod starts with before its ConfigMap.
const DOCKERFILE: SourceFile = { where: 'deploy/Dockerfile', text: await readFile(join(ROOT, 'deploy', 'Dockerfile'), 'utf8') }
const IMAGE_ENV = new Map(readStages(DOCKERFILE.text).at(-1)!.instructions
  .filter(instruction => instruction.keyword === 'ENV').flatMap(env => [...assignments(env.args)]))

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
