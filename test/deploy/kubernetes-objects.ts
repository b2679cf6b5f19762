// deploy/kubernetes/ read as Kubernetes objects, for deploy-kit.test.ts and kubernetes.e2e.test.ts: the
// manifests parsed, and a kustomization rendered as kustomize does for these overlays (resources, then
// strategic merge patches), so that the default suite checks the objects as applied without kubectl.
import { existsSync, readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { parseAllDocuments, parse as parseYaml } from 'yaml'
import { ROOT, type SourceFile } from './deploy-rules.js'

export const KUBERNETES = join(ROOT, 'deploy', 'kubernetes')

// Only what these tests read of the Kubernetes objects.
export interface Probe { httpGet?: { path: string, port: number | string } }
export interface Container {
  name: string
  image?: string
  env?: Array<{ name: string, value?: string, valueFrom?: { secretKeyRef?: { name: string, key: string, optional?: boolean } } }>
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
export interface Volume {
  name: string
  emptyDir?: { sizeLimit?: string } | null
  ephemeral?: { volumeClaimTemplate?: { spec?: { resources?: { requests?: { storage?: string } } } } }
  persistentVolumeClaim?: { claimName: string }
}
export interface PodSpec {
  containers: Container[]
  initContainers?: Container[]
  terminationGracePeriodSeconds?: number
  serviceAccountName?: string
  securityContext?: { runAsNonRoot?: boolean, runAsUser?: number }
  volumes?: Volume[]
}
export interface KubeObject {
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
    podSelector?: { matchLabels?: Record<string, string> }
    policyTypes?: string[]
    ingress?: Array<{
      from?: Array<{ namespaceSelector?: { matchLabels?: Record<string, string> }, podSelector?: unknown, ipBlock?: unknown }>
      ports?: Array<{ port: number | string, protocol?: string }>
    }>
    resources?: { requests?: { storage?: string } }
    template?: {
      metadata?: { labels?: Record<string, string>, annotations?: Record<string, string> }
      spec: PodSpec
    }
  }
}
export interface Kustomization {
  resources?: string[]
  patches?: Array<{ path?: string }>
  patchesStrategicMerge?: string[]
}

export async function yamlFiles (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter(entry => entry.isFile() && /\.ya?ml$/.test(entry.name)).map(entry => join(entry.parentPath, entry.name)).sort()
}

export function parseObjects (text: string, where: string): KubeObject[] {
  return parseAllDocuments(text).map(document => {
    if (document.errors.length > 0 || document.warnings.length > 0) throw new Error(`${where}: ${[...document.errors, ...document.warnings].map(e => e.message).join('; ')}`)
    return document.toJS() as KubeObject
  }).filter(object => object !== null)
}

export function readObjects (file: string): KubeObject[] {
  return parseObjects(readFileSync(file, 'utf8'), relative(ROOT, file))
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A strategic merge patch as kustomize applies these overlays: maps merged key by key, lists of named
 * entries (containers, volumes, env, ports) merged by name, anything else replaced; null removes a key.
 */
export function strategicMerge (base: unknown, patch: unknown): unknown {
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
 * its strategic merge patches, each applied to the object of its kind and name. Enough for these overlays:
 * kubernetes.e2e.test.ts checks it renders what kubectl kustomize does.
 */
export function renderHere (dir: string): KubeObject[] {
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
export function sourcesOf (dir: string): SourceFile[] {
  const kustomization = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization
  const own = [...(kustomization.resources ?? []), ...(kustomization.patches ?? []).map(patch => patch.path ?? ''), ...(kustomization.patchesStrategicMerge ?? [])]
  return own.filter(resource => resource !== '').flatMap(resource => {
    const path = join(dir, resource)
    if (existsSync(join(path, 'kustomization.yaml'))) return sourcesOf(path)
    return [{ where: relative(ROOT, path), text: readFileSync(path, 'utf8') }]
  })
}

/** Every container of every pod template among these objects. */
export function containersOf (objects: KubeObject[]): Container[] {
  return objects.flatMap(object => [...(object.spec?.template?.spec.containers ?? []), ...(object.spec?.template?.spec.initContainers ?? [])])
}
