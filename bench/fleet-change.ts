// The fleet workload (`--fleet`, BENCHMARKS.md's fleet goal): two replicas (`node dist/server.js`, as deployed)
// follow a manifest in moto's S3, behind nginx configured as docs/guides/deploying.md's "Behind nginx"; the
// snapshot is published with `explore-replica publish`, then a change file. Timed: from the publish's end
// (the manifest replaced) to each replica serving the change, against the poll interval + 1 s; counted:
// what each replica downloaded for it, as it logged each object. Skipped, with the reason, where moto_server
// or nginx is missing.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { writeChangeFile } from './change-file.js'
import { nginxConfig } from './nginx-config.js'
import { childEnv, freePort, get, logEntries, memoryOf, startChild, stopChild, waitForOutput, waitUntilAnswering, type Child } from './processes.js'
import type { FleetResult } from './report.js'
import type { SnapshotInfo } from './snapshots.js'

const MOTO = process.env.MOTO_SERVER ?? 'moto_server'
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find(existsSync)
const BUCKET = 'bench'
const PREFIX = 'explore/'
const SERVING = '"msg":"serving the manifest\'s snapshot and changes"'
const DOWNLOADED = 'downloaded an object the manifest names'
const FROM_IMAGE = 'snapshot read from its version image, put together as it downloaded'
const KEPT = 'the snapshot served from its image is downloaded: its version is kept'
// Publishing and the first load of a 1M-item snapshot by two replicas at once on two cores.
const START_TIMEOUT_MS = 300_000
// A change not served by then is reported as never served.
const SERVED_TIMEOUT_MS = 60_000
const AWS = { AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', AWS_REGION: 'us-east-1' }

/** Whatever the fleet workload cannot run without, or null when everything is here. */
export function fleetMissing (): string | null {
  if (spawnSync(MOTO, ['--help'], { stdio: 'ignore' }).status !== 0) return 'moto_server is not installed (pip install \'moto[server]\', or set MOTO_SERVER)'
  if (NGINX === undefined || spawnSync(NGINX, ['-v']).status !== 0) return 'nginx is not installed (Debian: apt-get install nginx)'
  return null
}

/** The run's own directory, removed at the end; `root` is the checkout whose dist/ is measured. */
export async function fleetChange (root: string, info: SnapshotInfo, dir: string, pollSeconds: number, log: (message: string) => void): Promise<FleetResult> {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const children: Child[] = []
  const started = (child: Child): Child => { children.push(child); return child }
  try {
    const motoPort = await freePort()
    const moto = started(startChild('moto', ['-H', '127.0.0.1', '-p', String(motoPort)], {}, MOTO))
    await waitForOutput(moto, 'Running on', 30_000, 'stderr')
    const endpoint = `http://127.0.0.1:${motoPort}`
    const s3 = new S3Client({ forcePathStyle: true, endpoint, region: AWS.AWS_REGION, credentials: { accessKeyId: AWS.AWS_ACCESS_KEY_ID, secretAccessKey: AWS.AWS_SECRET_ACCESS_KEY } })
    try {
      await s3.send(new CreateBucketCommand({ Bucket: BUCKET }))
    } finally {
      s3.destroy()
    }
    const s3Env = { ...AWS, AWS_ENDPOINT_URL_S3: endpoint, S3_FORCE_PATH_STYLE: 'true' }
    const publish = async (...args: string[]): Promise<number> => {
      const begun = performance.now()
      const cli = startChild('publish', [join(root, 'dist', 'cli', 'main.js'), 'publish', '--to', `s3://${BUCKET}/${PREFIX}`, '--s3-force-path-style', ...args], { env: { ...childEnv(), ...s3Env } })
      const code = await cli.exited
      if (code !== 0) throw new Error(`explore-replica publish ${args.join(' ')} failed (${String(code)}):\n${cli.output()}`)
      return performance.now() - begun
    }
    log(`${info.label} fleet: publishing the ${(info.bytes / 1e6).toFixed(0)} MB snapshot to moto's S3`)
    await publish('--snapshot', info.file)

    const replicas = await Promise.all(['a', 'b'].map(async name => {
      const port = await freePort()
      const child = started(startChild(`replica-${name}`, [
        join(root, 'dist', 'server.js'), '--snapshot-url', `s3://${BUCKET}/${PREFIX}manifest.json`, '--snapshot-cache-dir', join(dir, `cache-${name}`),
        '--snapshot-poll-seconds', String(pollSeconds), '--port', String(port), '--log-level', 'info', '--request-log', 'false'
      ], { cwd: root, env: { ...childEnv(), ...s3Env, STATE_DIR: join(dir, `state-${name}`) } }))
      const base = `http://127.0.0.1:${port}`
      // The join: from the spawn to the first 200 of /-/readyz (from the image, ADR 042), then the snapshot kept.
      const joinMs = waitUntilAnswering(child, `${base}/-/readyz`, START_TIMEOUT_MS)
      return { name, port, child, base, joinMs, downloads: downloadsLogged(child) }
    }))
    const joinMs = await Promise.all(replicas.map(async r => await r.joinMs))
    await Promise.all(replicas.map(async r => await waitForOutput(r.child, SERVING, START_TIMEOUT_MS)))
    // Joined from the image, a replica downloads the snapshot next, in the same check (ADR 042): a change published
    // before that ends waits for it, so the change is published once both keep their version.
    const keptMs = await Promise.all(replicas.map(async r => r.child.output().includes(FROM_IMAGE)
      ? await waitForOutput(r.child, KEPT, START_TIMEOUT_MS)
      : null))
    const front = await freePort()
    started(await startNginx(join(dir, 'nginx'), front, replicas.map(r => r.port)))
    const language = Object.entries(info.items).sort(([, a], [, b]) => b - a)[0]?.[0] ?? 'en'
    const countVia = async (base: string): Promise<number> => {
      const answer = await get(`${base}/${language}/api/internal/explore/?limit=1`)
      if (answer.status !== 200) throw new Error(`${base} answered ${answer.status}`)
      return (JSON.parse(answer.body.toString('utf8')) as { count: number }).count
    }
    const countBefore = await countVia(`http://127.0.0.1:${front}`)
    const downloadedAtStart = replicas.map(r => r.downloads.since(0))

    const changeFile = join(dir, 'chg-0001.jsonl')
    const changeBytes = await writeChangeFile(info.file, changeFile, 'fleet-0001')
    log(`${info.label} fleet: both replicas serve the snapshot; publishing a ${(changeBytes / 1e6).toFixed(2)} MB change file (poll every ${pollSeconds} s)`)
    const publishBegun = performance.now()
    const publishMs = await publish('--changes', changeFile)
    const publishedAt = performance.now()
    // Each replica's /-/status, polled apart: the moment it serves a version with the change.
    const servedAfterMs = await Promise.all(replicas.map(async r => {
      while (performance.now() - publishedAt < SERVED_TIMEOUT_MS) {
        const status = JSON.parse((await get(`${r.base}/-/status`)).body.toString('utf8')) as { snapshot: { changes?: unknown[] } | null }
        if ((status.snapshot?.changes?.length ?? 0) > 0) return performance.now() - publishedAt
        await sleep(20)
      }
      return null
    }))
    // Through nginx, once both serve it: every answer has the count after the change's deletes.
    const countsAfter = new Set<number>()
    for (let i = 0; i < 20; i++) countsAfter.add(await countVia(`http://127.0.0.1:${front}`))
    const downloaded = replicas.map(r => r.downloads.since(publishBegun))
    const rssBytes = await Promise.all(replicas.map(async r => (await memoryOf(r.child.pid)).rssBytes))
    const result: FleetResult = {
      joinMs,
      keptMs,
      pollSeconds,
      snapshotBytes: (await stat(info.file)).size,
      changeBytes,
      publishMs,
      servedAfterMs,
      viaNginx: { countBefore, countsAfter: [...countsAfter] },
      downloadedAtStart,
      downloaded,
      rssBytes
    }
    log(`${info.label} fleet: the replicas joined (first answer) after ${joinMs.map(seconds).join(' and ')}; ` +
      `from the image, their snapshots kept after ${keptMs.map(ms => ms === null ? 'n/a (not from the image)' : seconds(ms)).join(' and ')}`)
    log(`${info.label} fleet: served by the replicas ${servedAfterMs.map(ms => ms === null ? 'never' : `${(ms / 1000).toFixed(2)} s`).join(' and ')} after the publish ` +
      `(goal ≤ ${pollSeconds + 1} s); downloaded ${downloaded.map(d => JSON.stringify(d)).join(' and ')}; through nginx the ${language} count ${countBefore} → ${[...countsAfter].join(', ')}`)
    return result
  } finally {
    for (const child of children.reverse()) await stopChild(child, child.name === 'nginx' ? 5000 : 15_000)
    await rm(dir, { recursive: true, force: true })
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`

/**
 * A replica's "downloaded an object the manifest names" log lines as they come, each with when it came;
 * `since(t)`: object name → bytes downloaded from `t` on.
 */
function downloadsLogged (child: Child): { since: (from: number) => Record<string, number> } {
  const seen: Array<{ at: number, object: string, bytes: number }> = []
  let partial = ''
  child.process.stdout?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8')
    const end = text.lastIndexOf('\n') + 1
    partial = text.slice(end)
    for (const { object, bytes } of logEntries(text.slice(0, end), DOWNLOADED)) {
      if (typeof object === 'string' && typeof bytes === 'number') seen.push({ at: performance.now(), object, bytes })
    }
  })
  return {
    since: from => {
      const bytes: Record<string, number> = {}
      for (const entry of seen) if (entry.at >= from) bytes[entry.object] = (bytes[entry.object] ?? 0) + entry.bytes
      return bytes
    }
  }
}

/** nginx in the foreground with docs/guides/deploying.md's upstream settings on loopback ports, every file in `dir`; once it answers. */
async function startNginx (dir: string, port: number, upstreams: number[]): Promise<Child> {
  await mkdir(join(dir, 'temp'), { recursive: true })
  const conf = join(dir, 'nginx.conf')
  await writeFile(conf, nginxConfig(dir, port, upstreams))
  const nginx = startChild('nginx', ['-p', dir, '-c', conf], {}, NGINX)
  await waitUntilAnswering(nginx, `http://127.0.0.1:${port}/-/healthz`, 30_000)
  return nginx
}
