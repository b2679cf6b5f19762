// deploy/kubernetes/ rendered by kubectl kustomize (an outside tool, hence the end-to-end suite): the same
// objects as the strategic merge of kubernetes-objects.ts, which deploy-kit.test.ts checks in the default suite.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './deploy-rules.js'
import { KUBERNETES, parseObjects, renderHere, type KubeObject } from './kubernetes-objects.js'

const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find(path => existsSync(path))

async function kustomize (dir: string): Promise<KubeObject[]> {
  const output = await new Promise<string>((resolve, reject) => {
    execFile(KUBECTL as string, ['kustomize', dir], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kubectl kustomize ${relative(ROOT, dir)}: ${stderr}`))
      else resolve(stdout)
    })
  })
  return parseObjects(output, `kubectl kustomize ${relative(ROOT, dir)}`)
}

function byKindAndName (objects: KubeObject[]): KubeObject[] {
  return [...objects].sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`))
}

t.test('kubectl kustomize renders base/ and s3-fleet/ to the objects the default suite checks', { skip: KUBECTL === undefined ? 'kubectl is not installed' : false }, async t => {
  for (const dir of ['base', 's3-fleet']) {
    t.same(byKindAndName(renderHere(join(KUBERNETES, dir))), byKindAndName(await kustomize(join(KUBERNETES, dir))), `${dir}/: the same objects as kubectl kustomize`)
  }
})
