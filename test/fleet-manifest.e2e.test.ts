// A fleet following a manifest, end to end with real processes (`node dist/server.js`, the built code a
// deployment runs; `npm run build` first): two replicas follow a manifest in moto's S3, each through a proxy
// of its own that counts what it downloads, and one follows a publisher's folder over HTTP. Everything is
// published with `explore-replica diff` and `publish`. A change reaches every replica as the change file's
// bytes alone; a manifest that lists less steps back with no download; a bad manifest is refused.
import t, { type Test } from 'tap'
import { spawn, spawnSync, execFile } from 'node:child_process'
import { stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { BUILT_CLI as CLI, BUILT_SERVER as SERVER, builtIsStale, childEnv, freePort, makeItem, type SnapshotDoc, tempDir, toJsonLines, versioned, watchOutput } from './helpers.js'
import { countingProxy, serveDirectory } from './sources/counting-servers.js'
import { hasReusePort } from '../src/serving/serving-mode.js'

const MOTO = process.env.MOTO_SERVER ?? 'moto_server'

/** Runs the built command line; resolves with its exit code and output. */
function cli (args: string[], env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [CLI, ...args], { env: childEnv(env) }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })
}

/** A replica process following `url`; resolves once it listens. */
async function replica (t: Test, url: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [SERVER, '--snapshot-url', url, '--snapshot-cache-dir', await tempDir(t),
    '--snapshot-poll-seconds', '3600', '--port', '0', '--request-log', 'false'],
  { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LOG_LEVEL: 'info', ...env }) })
  const { logged, text, origin } = watchOutput(child)
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const port = Number(new URL(await origin()).port)
  /** The `en` page: its count and the title of pk 1. */
  const served = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/en/api/internal/explore/?limit=100`)
    const body = await res.json() as { count: number, results: Array<{ pk: number, translated_title: string }> }
    return { count: body.count, first: body.results.find(item => item.pk === 1)?.translated_title ?? '(gone)' }
  }
  const ready = async () => (await fetch(`http://127.0.0.1:${port}/-/readyz`)).status
  const status = async () => await (await fetch(`http://127.0.0.1:${port}/-/status`)).json() as { source: { lastError: { message: string } | null }, reloads: { images: { read: number } } }
  return { child, logged, served, ready, status, url: `http://127.0.0.1:${port}`, log: text }
}

const SERVING = /"msg":"serving the manifest's snapshot and changes"/
/** A join served from the image: its snapshot downloaded after (ADR 042). */
const KEPT = /"msg":"the snapshot served from its image is downloaded: its version is kept"/
const FAILED = /snapshot source check failed/

/** v1 with pk 1 retitled and pk 2 gone: what the change published below takes v1 to. */
function edited (): SnapshotDoc {
  const doc = versioned(1)
  const en = doc.languages.en as Array<ReturnType<typeof makeItem>>
  en[0] = { ...en[0]!, translated_title: 'changed 1' }
  en.splice(1, 1)
  return doc
}

/** A snapshot and the change file `diff` makes to `edited()`, as a publisher holds them. */
async function publisherFiles (t: Test) {
  const dir = await tempDir(t)
  const snapshot = join(dir, 'snap-1.jsonl')
  await writeFile(snapshot, toJsonLines(versioned(1)))
  const target = join(dir, 'edited.jsonl')
  await writeFile(target, toJsonLines(edited()))
  const change = join(dir, 'chg-0001.jsonl')
  const diffed = await cli(['diff', snapshot, target, '--out', change])
  t.equal(diffed.code, 0, diffed.stderr)
  return { snapshot, change, snapshotBytes: (await stat(snapshot)).size, changeBytes: (await stat(change)).size }
}

const stale = builtIsStale()
if (stale) {
  t.test('a fleet following a manifest', { skip: 'dist/ is missing or older than src/: run npm run build first' }, () => {})
} else if (spawnSync(MOTO, ['--help'], { stdio: 'ignore' }).status !== 0) {
  t.test('a fleet following a manifest in S3', { skip: 'moto_server is not installed (pip install \'moto[server]\', or set MOTO_SERVER)' }, () => {})
} else {
  t.test('two replicas follow a manifest in S3: a published change costs each the change file\'s bytes; a step back costs none', async t => {
    const port = await freePort()
    const moto = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
    t.teardown(() => { moto.kill() })
    await new Promise<void>((resolve, reject) => {
      moto.once('exit', code => reject(new Error(`moto_server exited (${code ?? 'signal'})`)))
      moto.stderr.on('data', (chunk: Buffer) => { if (/Running on/.test(chunk.toString())) resolve() })
    })
    const endpoint = `http://127.0.0.1:${port}`
    const aws = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' }
    const s3 = new S3Client({ forcePathStyle: true, endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } })
    t.teardown(() => s3.destroy())
    await s3.send(new CreateBucketCommand({ Bucket: 'fleet' }))
    const publish = (...args: string[]) => cli(['publish', '--to', 's3://fleet/explore/', '--s3-force-path-style', ...args], { ...aws, AWS_ENDPOINT_URL_S3: endpoint })

    const files = await publisherFiles(t)
    t.equal((await publish('--snapshot', files.snapshot)).code, 0)
    // Each replica reaches the store through a proxy of its own: what each downloads is counted apart.
    const proxies = [await countingProxy(t, endpoint), await countingProxy(t, endpoint)]
    const replicas = await Promise.all(proxies.map(proxy => replica(t, 's3://fleet/explore/manifest.json', { ...aws, AWS_ENDPOINT_URL_S3: proxy.origin, S3_FORCE_PATH_STYLE: 'true' })))
    await Promise.all(replicas.map(r => r.logged(SERVING)))
    for (const r of replicas) t.same(await r.served(), { count: 21, first: 'v1 item 1' })
    for (const r of replicas) t.match((await r.status()).reloads.images, { read: 1 }, 'each joined from the image publish made, not a parse')
    await Promise.all(replicas.map(r => r.logged(KEPT)))
    for (const [i, proxy] of proxies.entries()) {
      t.equal(proxy.sent('/snap-1.jsonl'), files.snapshotBytes, 'each replica downloaded the snapshot once')
      t.match([...proxy.bytes.keys()], ['/fleet/explore/manifest.json', /^\/fleet\/explore\/[0-9a-f]{32}\.image$/, '/fleet/explore/snap-1.jsonl'], 'the image first, the snapshot after')
      const log = replicas[i]!.log()
      t.ok(log.search(SERVING) < log.search(/snap-1\.jsonl"[^\n]*"msg":"downloaded an object the manifest names"/), 'served before the snapshot downloaded')
    }

    t.equal((await publish('--changes', files.change)).code, 0, 'the change is published')
    for (const r of replicas) r.child.kill('SIGHUP')
    await Promise.all(replicas.map(r => r.logged(SERVING, 2)))
    for (const r of replicas) t.same(await r.served(), { count: 20, first: 'changed 1' }, 'the change is served')
    for (const [i, proxy] of proxies.entries()) {
      t.equal(proxy.sent('/chg-0001.jsonl'), files.changeBytes, `replica ${i} downloaded the change file's ${files.changeBytes} bytes`)
      t.equal(proxy.sent('/snap-1.jsonl'), files.snapshotBytes, `replica ${i} did not download the ${files.snapshotBytes}-byte snapshot again`)
      t.comment(`replica ${i} downloaded: ${JSON.stringify(Object.fromEntries(proxy.bytes))}`)
    }

    for (const proxy of proxies) proxy.reset()
    t.equal((await publish('--step-back', '1')).code, 0)
    for (const r of replicas) r.child.kill('SIGHUP')
    await Promise.all(replicas.map(r => r.logged(SERVING, 3)))
    for (const r of replicas) t.same(await r.served(), { count: 21, first: 'v1 item 1' }, 'stepped back')
    for (const proxy of proxies) t.same([...proxy.bytes.keys()], ['/fleet/explore/manifest.json'], 'with nothing downloaded but the manifest')

    // A manifest naming an object outside its prefix: refused by both, which keep serving, ready.
    await s3.send(new PutObjectCommand({ Bucket: 'fleet', Key: 'explore/manifest.json', Body: JSON.stringify({ manifest: 'explore', version: 1, snapshot: '../other/snap.jsonl', changes: [] }) }))
    for (const r of replicas) r.child.kill('SIGHUP')
    await Promise.all(replicas.map(r => r.logged(FAILED)))
    for (const r of replicas) {
      t.same(await r.served(), { count: 21, first: 'v1 item 1' })
      t.equal(await r.ready(), 200)
      t.match((await r.status()).source.lastError?.message, /^the manifest is refused: snapshot: "\.\.\/other\/snap\.jsonl" is not a name beside the manifest/)
    }
  })
}

if (!stale) {
  t.test('a replica follows a publisher\'s folder over HTTP: the change alone is downloaded', async t => {
    const folder = await tempDir(t)
    const site = await serveDirectory(t, folder)
    const files = await publisherFiles(t)
    t.equal((await cli(['publish', '--to', folder, '--snapshot', files.snapshot])).code, 0)
    const r = await replica(t, `${site.origin}/manifest.json`)
    await r.logged(SERVING)
    t.same(await r.served(), { count: 21, first: 'v1 item 1' })

    t.equal((await cli(['publish', '--to', folder, '--changes', files.change])).code, 0)
    r.child.kill('SIGHUP')
    await r.logged(SERVING, 2)
    t.same(await r.served(), { count: 20, first: 'changed 1' })
    t.equal(site.sent('/chg-0001.jsonl'), files.changeBytes)
    t.equal(site.sent('/snap-1.jsonl'), files.snapshotBytes, 'the snapshot downloaded once, at the start')
    t.comment(`downloaded over HTTP: ${JSON.stringify(Object.fromEntries(site.bytes))}`)

    await writeFile(join(folder, 'manifest.json'), '{"manifest": "explore", "version": 1')
    r.child.kill('SIGHUP')
    await r.logged(FAILED)
    t.same(await r.served(), { count: 20, first: 'changed 1' })
    t.match((await r.status()).source.lastError?.message, /^the manifest is refused: not JSON/)
  })
}

if (!stale) {
  t.test('with serving threads (WORKERS=2) each object is downloaded and loaded once, and every thread serves the chain', { skip: !hasReusePort() && `serving threads need Node 22.12 or later; this is Node ${process.versions.node}` }, async t => {
    const folder = await tempDir(t)
    const site = await serveDirectory(t, folder)
    const files = await publisherFiles(t)
    t.equal((await cli(['publish', '--to', folder, '--snapshot', files.snapshot])).code, 0)
    t.equal((await cli(['publish', '--to', folder, '--changes', files.change])).code, 0)
    const r = await replica(t, `${site.origin}/manifest.json`, { WORKERS: '2' })
    await r.logged(SERVING)
    await r.logged(KEPT)
    t.equal(site.sent('/snap-1.jsonl'), files.snapshotBytes, 'the snapshot downloaded once')
    t.equal(site.sent('/chg-0001.jsonl'), files.changeBytes, 'the change too')
    const titles = new Set<string>()
    for (let i = 0; i < 8; i++) titles.add((await r.served()).first)
    t.same([...titles], ['changed 1'], 'every answer, whichever thread gives it, is the chain')
  })
}
