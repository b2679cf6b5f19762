// deploy/kubernetes/: every manifest parses; the replicas as kustomize renders them (base/, and s3-fleet/
// on top of it) are checked against the service itself: every variable is one of its settings and loads,
// the probes ask the operator's port for /-/healthz and /-/readyz, the Service sends to PORT, memory is
// requested and limited, shutdown fits in the grace period.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { loadConfig, OPTIONS, S3_ENVIRONMENT } from '../../src/config.js'
import { assignments, readStages } from './dockerfile-instructions.js'

const ROOT = join(import.meta.dirname, '..', '..')
const KUBERNETES = join(ROOT, 'deploy', 'kubernetes')
const CONFIG_NAMES = new Set<string>([...OPTIONS.map(option => option.env), ...S3_ENVIRONMENT])
const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find(path => existsSync(path))

// The image's own settings (deploy/Dockerfile's ENV): what a pod starts with before its ConfigMap.
const IMAGE_ENV = new Map(readStages(await readFile(join(ROOT, 'deploy', 'Dockerfile'), 'utf8')).at(-1)!.instructions
  .filter(instruction => instruction.keyword === 'ENV').flatMap(env => [...assignments(env.args)]))

// Only what these tests read of the Kubernetes objects.
interface Probe { httpGet?: { path: string, port: number | string } }
interface Container {
  name: string
  image: string
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
    template?: {
      metadata?: { labels?: Record<string, string> }
      spec: {
        containers: Container[]
        terminationGracePeriodSeconds?: number
        serviceAccountName?: string
        securityContext?: { runAsNonRoot?: boolean, runAsUser?: number }
        volumes?: Array<{ name: string }>
      }
    }
  }
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

async function kustomize (dir: string): Promise<KubeObject[]> {
  const output = await new Promise<string>((resolve, reject) => {
    execFile(KUBECTL as string, ['kustomize', dir], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kubectl kustomize ${relative(ROOT, dir)}: ${stderr}`))
      else resolve(stdout)
    })
  })
  return parseObjects(output, `kubectl kustomize ${relative(ROOT, dir)}`)
}

/** Bytes in a Kubernetes memory quantity (`160Mi`, `1.5Gi`, `512M`). */
function bytes (quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity)
  if (match === null) throw new Error(`not a memory quantity: ${quantity}`)
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[match[2] ?? ''] ?? 1
  return Number(match[1]) * unit
}

function matches (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels?.[key] === value)
}

/** The replicas as applied: one Deployment, its ConfigMap, Service and PodDisruptionBudget, held to the service's rules. */
function checkReplicas (t: Test, objects: KubeObject[]): void {
  const deployments = objects.filter(object => object.kind === 'Deployment')
  t.equal(deployments.length, 1, 'one Deployment')
  const deployment = deployments[0] as KubeObject
  const pod = deployment.spec!.template!
  const container = pod.spec.containers.find(c => c.name === 'explore-replica')
  if (container === undefined) {
    t.fail('no explore-replica container')
    return
  }

  // The container's environment: the image's, then its ConfigMaps', then its own env.
  const settings = new Map<string, string>([...IMAGE_ENV].filter((entry): entry is [string, string] => entry[1] !== undefined))
  for (const from of container.envFrom ?? []) {
    const configMap = objects.find(object => object.kind === 'ConfigMap' && object.metadata.name === from.configMapRef?.name)
    if (configMap === undefined) {
      t.fail(`ConfigMap ${from.configMapRef?.name ?? '?'} is not among the manifests`)
      continue
    }
    for (const [name, value] of Object.entries(configMap.data ?? {})) {
      t.ok(CONFIG_NAMES.has(name), `ConfigMap ${configMap.metadata.name}: ${name} is one of the service's settings`)
      t.equal(typeof value, 'string', `ConfigMap ${configMap.metadata.name}: ${name} is a string, as Kubernetes requires`)
      settings.set(name, String(value))
    }
  }
  for (const variable of container.env ?? []) {
    t.ok(CONFIG_NAMES.has(variable.name), `env ${variable.name} is one of the service's settings`)
    if (variable.value !== undefined) settings.set(variable.name, variable.value)
  }
  // What the service makes of it: a configuration it starts with.
  const config = loadConfig({ env: Object.fromEntries(settings) })

  // Ports: PORT serves the API; the probes ask the operator's port when there is one, on the pod's address.
  const ports = container.ports ?? []
  const portNumber = (port: number | string | undefined): number | undefined => typeof port === 'number' ? port : ports.find(p => p.name === port)?.containerPort
  t.ok(ports.some(p => p.containerPort === config.port), `containerPort ${config.port} (PORT)`)
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

  // Memory: requested and limited (README, "Memory to plan for"); no more asked than allowed.
  const { requests, limits } = container.resources ?? {}
  t.ok(requests?.memory !== undefined && limits?.memory !== undefined, 'memory requested and limited')
  if (requests?.memory !== undefined && limits?.memory !== undefined) t.ok(bytes(requests.memory) <= bytes(limits.memory), `request ${requests.memory} ≤ limit ${limits.memory}`)
  t.ok(requests?.cpu !== undefined, 'cpu requested')

  // Shutdown: the load balancer's delay (preStop) and SHUTDOWN_GRACE_MS within the pod's grace period.
  const preStop = container.lifecycle?.preStop?.exec?.command
  const delay = preStop?.[0] === 'sleep' ? Number(preStop[1]) : 0
  const grace = pod.spec.terminationGracePeriodSeconds ?? 30
  t.ok(grace * 1000 > delay * 1000 + config.shutdownGraceMs, `terminationGracePeriodSeconds ${grace} > preStop ${delay} s + SHUTDOWN_GRACE_MS ${config.shutdownGraceMs} ms`)

  // Not root; a read-only root file system with SNAPSHOT_CACHE_DIR writable.
  t.equal(pod.spec.securityContext?.runAsNonRoot, true, 'runAsNonRoot')
  t.equal(pod.spec.securityContext?.runAsUser, 1000, 'the image\'s node user, by number')
  t.equal(container.securityContext?.allowPrivilegeEscalation, false)
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
  for (const port of service?.spec?.ports ?? []) t.equal(portNumber(port.targetPort), config.port, `Service port ${port.port} → PORT`)
  const budget = objects.find(object => object.kind === 'PodDisruptionBudget')
  t.ok(matches(budget?.spec?.selector?.matchLabels, labels), 'the PodDisruptionBudget covers the pods')
  t.ok(budget?.spec?.maxUnavailable !== undefined || budget?.spec?.minAvailable !== undefined, 'and limits how many a drain takes')
  t.ok((deployment.spec!.replicas ?? 1) >= 2, 'more than one replica, or the budget blocks every drain')
}

t.test('every manifest is YAML that parses without a warning', async t => {
  const files = await yamlFiles(KUBERNETES)
  t.ok(files.length >= 5, `${files.length} files`)
  for (const file of files) t.doesNotThrow(() => parseObjects(readFileSync(file, 'utf8'), relative(ROOT, file)), relative(ROOT, file))
  t.throws(() => parseObjects('data:\n  PORT: "3000"\n   OPS_PORT: 1\n', 'bad'), 'and a bad one is refused')
})

t.test('base/, as written: the replicas follow the service\'s rules', async t => {
  const files = (await yamlFiles(join(KUBERNETES, 'base'))).filter(file => !file.endsWith('kustomization.yaml'))
  checkReplicas(t, files.flatMap(file => parseObjects(readFileSync(file, 'utf8'), relative(ROOT, file))))
})

t.test('base/ and s3-fleet/ as kustomize renders them', { skip: KUBECTL === undefined ? 'kubectl is not installed: kustomize cannot render the overlays (the manifests as written are checked above)' : false }, async t => {
  checkReplicas(t, await kustomize(join(KUBERNETES, 'base')))
  const fleet = await kustomize(join(KUBERNETES, 's3-fleet'))
  checkReplicas(t, fleet)
  const configMap = fleet.find(object => object.kind === 'ConfigMap')
  const config = loadConfig({ env: Object.fromEntries(Object.entries(configMap?.data ?? {}).map(([k, v]) => [k, String(v)])) })
  t.match(config.snapshotUrl, /^s3:\/\/[^/]+\/.+\.(json|jsonl|ndjson)$/, 'the fleet follows an s3:// snapshot')
  t.ok(typeof configMap?.data?.AWS_REGION === 'string', 'with its region')
  t.ok(configMap?.data?.OPS_PORT !== undefined, 'the base\'s settings kept')
})
