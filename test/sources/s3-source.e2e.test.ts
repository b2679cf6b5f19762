// SNAPSHOT_URL=s3://…, against moto's S3 server (a real S3 API over HTTP), started on a free port. Skipped,
// with the reason, where moto_server is not installed.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { freePort, tempDir, toJsonLines, versioned, type SnapshotDoc } from '../helpers.js'
import { SecretUrl } from '../../src/secret-url.js'

const MOTO = process.env.MOTO_SERVER ?? 'moto_server'

if (spawnSync(MOTO, ['--help'], { stdio: 'ignore' }).status !== 0) {
  t.test('the S3 source', { skip: 'moto_server is not installed (pip install \'moto[server]\', or set MOTO_SERVER): the S3 source is not tested here' }, () => {})
} else {
  const port = await freePort()
  const endpoint = `http://127.0.0.1:${port}`
  const moto = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
  t.teardown(() => { moto.kill() })
  // Ready once it answers; its own log line says so too, but the answer is what counts.
  await new Promise<void>((resolve, reject) => {
    moto.once('exit', code => reject(new Error(`moto_server exited (${code ?? 'signal'})`)))
    moto.stderr.on('data', (chunk: Buffer) => { if (/Running on/.test(chunk.toString())) resolve() })
  })
  // The SDK reads its standard settings from the environment, as a replica's would.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: endpoint })
  const s3 = new S3Client({ forcePathStyle: true })
  t.teardown(() => s3.destroy())
  await s3.send(new CreateBucketCommand({ Bucket: 'snapshots' }))
  const publish = async (doc: SnapshotDoc | string, key = 'explore/snapshot.jsonl') => {
    await s3.send(new PutObjectCommand({ Bucket: 'snapshots', Key: key, Body: typeof doc === 'string' ? doc : toJsonLines(doc) }))
  }

  const following = async (url: string, cacheDir?: string, overrides: Partial<Config> = {}): Promise<FastifyInstance> => {
    const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotUrl: new SecretUrl(url), snapshotCacheDir: cacheDir ?? await tempDir(t), snapshotPollSeconds: 3600, s3ForcePathStyle: true, ...overrides } }))
    t.teardown(() => app.close())
    await app.ready()
    return app
  }
  const served = async (app: FastifyInstance): Promise<number | null> => {
    const res = await app.inject('/en/api/internal/explore/?limit=1')
    if (res.statusCode !== 200) return null
    return Number(/^v(\d+) /.exec(res.json().results[0].translated_title)?.[1])
  }
  const lastError = async (app: FastifyInstance): Promise<string | undefined> => (await app.inject('/-/status')).json().source.lastError?.message

  t.test('an S3 object is followed by ETag: served, unchanged (a 304 the SDK throws), replaced, refused when bad', async t => {
    await publish(versioned(1))
    const app = await following('s3://snapshots/explore/snapshot.jsonl')
    await app.snapshotSource!.checkNow()
    t.equal(await served(app), 1)
    const status = (await app.inject('/-/status')).json().source
    t.match(status, { url: 's3://snapshots/explore/snapshot.jsonl', etag: /^"[0-9a-f]+"$/, lastError: null })

    await app.snapshotSource!.checkNow()
    const unchanged = (await app.inject('/-/status')).json().source
    t.match(unchanged, { checks: 2, errors: 0, lastChanged: status.lastChanged }, 'an unchanged object is no error and no change')

    await publish(versioned(2))
    await app.snapshotSource!.checkNow()
    t.equal(await served(app), 2)

    await publish('not a snapshot\n')
    await app.snapshotSource!.checkNow()
    t.equal(await served(app), 2, 'a bad object keeps the last good snapshot')
    t.match(await lastError(app), /not a valid snapshot/)
    t.equal((await app.inject('/-/readyz')).statusCode, 200)
  })

  t.test('wrong credentials are reported as such, with what to check', async t => {
    // A second moto that checks signatures after its first two actions (the bucket and the object):
    // the test's made-up key is then unknown to it, as a wrong key is to a real store.
    const authPort = await freePort()
    const strict = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(authPort)], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, INITIAL_NO_AUTH_ACTION_COUNT: '2' } })
    t.teardown(() => { strict.kill() })
    await new Promise<void>((resolve, reject) => {
      strict.once('exit', code => reject(new Error(`moto_server exited (${code ?? 'signal'})`)))
      strict.stderr.on('data', (chunk: Buffer) => { if (/Running on/.test(chunk.toString())) resolve() })
    })
    const strictEndpoint = `http://127.0.0.1:${authPort}`
    const admin = new S3Client({ forcePathStyle: true, endpoint: strictEndpoint })
    t.teardown(() => admin.destroy())
    await admin.send(new CreateBucketCommand({ Bucket: 'locked' }))
    await admin.send(new PutObjectCommand({ Bucket: 'locked', Key: 'snapshot.jsonl', Body: toJsonLines(versioned(1)) }))
    process.env.AWS_ENDPOINT_URL_S3 = strictEndpoint
    t.teardown(() => { process.env.AWS_ENDPOINT_URL_S3 = endpoint })
    const app = await following('s3://locked/snapshot.jsonl')
    await app.snapshotSource!.checkNow()
    t.match(await lastError(app), /access denied \(\w+\): check the credentials \(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY\)/)
    t.equal((await app.inject('/-/readyz')).statusCode, 503)
  })

  t.test('a missing key, a missing bucket and an unreachable store are reported, never a crash', async t => {
    await publish(versioned(1), 'other/snapshot.jsonl')
    const app = await following('s3://snapshots/other/snapshot.jsonl')
    await app.snapshotSource!.checkNow()
    t.equal(await served(app), 1)

    const missingKey = await following('s3://snapshots/nowhere/snapshot.jsonl')
    await missingKey.snapshotSource!.checkNow()
    t.match(await lastError(missingKey), /no such object/)
    t.equal((await missingKey.inject('/-/readyz')).statusCode, 503, 'no copy and no object: unready')

    const missingBucket = await following('s3://no-such-bucket/snapshot.jsonl')
    await missingBucket.snapshotSource!.checkNow()
    t.match(await lastError(missingBucket), /the bucket does not exist/)

    const cacheDir = await tempDir(t)
    const first = await following('s3://snapshots/other/snapshot.jsonl', cacheDir)
    await first.snapshotSource!.checkNow()
    await first.close()
    process.env.AWS_ENDPOINT_URL_S3 = `http://127.0.0.1:${await freePort()}`
    t.teardown(() => { process.env.AWS_ENDPOINT_URL_S3 = endpoint })
    const restarted = await following('s3://snapshots/other/snapshot.jsonl', cacheDir)
    await restarted.snapshotSource!.checkNow()
    t.match(await lastError(restarted), /could not be reached/)
    t.equal(await served(restarted), 1, 'a restart during a store outage serves the cached copy')
  })

  t.test('an object stored with a Content-Encoding is refused, saying so, not downloaded encoded', async t => {
    await s3.send(new PutObjectCommand({ Bucket: 'snapshots', Key: 'gz/snapshot.jsonl', Body: gzipSync(toJsonLines(versioned(1))), ContentEncoding: 'gzip' }))
    const app = await following('s3://snapshots/gz/snapshot.jsonl')
    await app.snapshotSource!.checkNow()
    t.match(await lastError(app), /^s3:\/\/snapshots\/gz\/snapshot\.jsonl answered with Content-Encoding: gzip: snapshots, change files, manifests and images are downloaded unencoded, as stored/)
    t.equal((await app.inject('/-/readyz')).statusCode, 503)
  })

  t.test('a manifest in S3 whose new objects together pass twice SNAPSHOT_MAX_MB is refused, and what it downloaded is removed', async t => {
    const padded = (id: string): string => `${JSON.stringify({ changes: 'explore', version: 1, id, padding: 'x'.repeat(750_000) })}\n`
    const manifest = async (snapshot: string, changes: string[]) => { await publish(JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes }), 'fleet/manifest.json') }
    await publish(versioned(1), 'fleet/snap-1.jsonl')
    await manifest('snap-1.jsonl', [])
    const app = await following('s3://snapshots/fleet/manifest.json', undefined, { snapshotMaxMb: 1 })
    await app.snapshotSource!.checkNow()
    t.equal(await served(app), 1)
    await publish(padded('chg-0001'), 'fleet/chg-0001.jsonl')
    await publish(padded('chg-0002'), 'fleet/chg-0002.jsonl')
    await publish(padded('chg-0003'), 'fleet/chg-0003.jsonl')
    await manifest('snap-1.jsonl', ['chg-0001.jsonl', 'chg-0002.jsonl', 'chg-0003.jsonl'])
    await app.snapshotSource!.checkNow()
    t.match(await lastError(app), /^chg-0003\.jsonl is \d+ bytes, more than the manifest's download budget allows \(\d+ of 2097152 bytes left: /)
    t.equal(await served(app), 1, 'the last good state served')
    t.same(await readdir(join(app.snapshots.file, '..', 'objects')), ['snap-1.jsonl'], 'nothing of the refused manifest left')
  })
}
