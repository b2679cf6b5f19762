// `explore-replica publish` (src/cli/publish-command.ts) as a child process, to a directory and to moto's S3:
// what it checks first, what it uploads, how it rewrites the manifest, and every refusal's exit code.
import t, { type Test } from 'tap'
import { execFile, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { open, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { DirectoryTarget } from '../../src/cli/publish-to-directory.js'
import { multipartEtagOf, S3Target } from '../../src/cli/publish-to-s3.js'
import { FINGERPRINT, IMAGE_FORMAT } from '../../src/snapshot/images/image-fingerprint.js'
import { readImageHeader } from '../../src/snapshot/images/version-image.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { VERSION } from '../../src/version.js'
import { BUILT_CLI as MAIN, childEnv, freePort, makeItem, tempDir, toJsonLines, versioned } from '../helpers.js'
import { PublishError } from '../../src/errors.js'

const MOTO = process.env.MOTO_SERVER ?? 'moto_server'

function run (args: string[], env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [MAIN, 'publish', ...args], { env: childEnv(env) }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })
}

/** A snapshot and two change files, in a directory of their own. */
async function files (t: Test) {
  const dir = await tempDir(t)
  const snapshot = join(dir, 'snap-0001.jsonl')
  await writeFile(snapshot, toJsonLines(versioned(1)))
  const change = (id: string, title: string) => `${JSON.stringify({ changes: 'explore', version: 1, id })}\n${JSON.stringify({ op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [], { translated_title: title }) })}\n`
  const first = join(dir, 'chg-0001.jsonl')
  await writeFile(first, change('chg-0001', 'first change'))
  const second = join(dir, 'chg-0002.jsonl')
  await writeFile(second, change('chg-0002', 'second change'))
  return { dir, snapshot, first, second, change }
}

t.test('to a directory: a snapshot, then changes appended, a step back, and the same change again', async t => {
  const { dir, snapshot, first, second } = await files(t)
  const to = join(await tempDir(t), 'fleet')
  const manifest = async () => JSON.parse(await readFile(join(to, 'manifest.json'), 'utf8'))

  const early = await run(['--to', to, '--changes', first])
  t.equal(early.code, 1)
  t.match(early.stderr, /has no manifest\.json: publish a snapshot first/)

  const published = await run(['--to', to, '--snapshot', snapshot])
  t.equal(published.code, 0, published.stderr)
  t.match(published.stdout, /^Copied snap-0001\.jsonl; .*manifest\.json now lists snap-0001\.jsonl \(its image [0-9a-f]{32}\.image\) and no changes\n$/, 'a copy to a directory is no upload')
  const image = { name: /^[0-9a-f]{32}\.image$/, format: IMAGE_FORMAT, by: VERSION, fingerprint: FINGERPRINT, snapshot: (await loadSnapshotFile(snapshot)).info.version, digest: /^[0-9a-f]{64}$/, bytes: Number }
  t.match(await manifest(), { manifest: 'explore', version: 1, snapshot: 'snap-0001.jsonl', changes: [], image, items: { en: 21 } })
  t.equal(await readFile(join(to, 'snap-0001.jsonl'), 'utf8'), await readFile(snapshot, 'utf8'))
  const imageEntry = (await manifest()).image
  const imageName = imageEntry.name as string
  const handle = await open(join(to, imageName), 'r')
  t.equal((await readImageHeader(handle).finally(() => handle.close())).made.version, (await loadSnapshotFile(snapshot)).info.version, 'the image is the snapshot\'s, made by the code a replica reads it with')
  t.equal((await run(['--to', to, '--snapshot', snapshot])).code, 0, 'published again: the same image, already there')

  t.equal((await run(['--to', to, '--changes', first])).code, 0)
  const appended = await run(['--to', to, '--changes', second])
  t.match(appended.stdout, `now lists snap-0001.jsonl (its image ${(await manifest()).image.name as string}) and 2 changes (the last chg-0002.jsonl)`)
  t.same((await manifest()).changes, ['chg-0001.jsonl', 'chg-0002.jsonl'])

  const again = await run(['--to', to, '--changes', second])
  t.equal(again.code, 1)
  t.match(again.stderr, 'chg-0002.jsonl is already in the manifest\'s changes')

  const back = await run(['--to', to, '--step-back', '1'])
  t.equal(back.code, 0, back.stderr)
  t.match(back.stdout, 'and 1 change (the last chg-0001.jsonl) (stepped back from chg-0002.jsonl)')
  t.same((await manifest()).changes, ['chg-0001.jsonl'])
  const tooFar = await run(['--to', to, '--step-back', '2'])
  t.equal(tooFar.code, 1)
  t.match(tooFar.stderr, 'the manifest lists 1 change: cannot step back 2')

  const forward = await run(['--to', to, '--changes', second])
  t.equal(forward.code, 0)
  t.match(forward.stdout, /^Already there, the same bytes: chg-0002\.jsonl;/, 'going forward again uploads nothing')
  t.same((await manifest()).changes, ['chg-0001.jsonl', 'chg-0002.jsonl'])

  const rollback = await run(['--to', to, '--snapshot', snapshot])
  t.equal(rollback.code, 0)
  t.same(await manifest(), { manifest: 'explore', version: 1, snapshot: 'snap-0001.jsonl', changes: [], image: imageEntry, items: { en: 21 } }, 'a snapshot published again: the manifest lists it alone')
  t.same((await readdir(to)).sort(), [imageName, 'chg-0001.jsonl', 'chg-0002.jsonl', 'manifest.json', 'snap-0001.jsonl'].sort(), 'no temporary file left')

  t.match((await manifest()).image, image, 'changes keep the snapshot\'s image')
  const plain = await run(['--to', to, '--snapshot', snapshot, '--no-image'])
  t.equal(plain.code, 0, plain.stderr)
  t.match(plain.stdout, 'now lists snap-0001.jsonl and no changes')
  t.notOk('image' in await manifest(), '--no-image: the manifest names none')
  t.ok(dir)
})

t.test('a snapshot whose counts moved too far is refused before anything is sent; --force publishes it', async t => {
  const dir = await tempDir(t)
  const to = join(await tempDir(t), 'fleet')
  const write = async (name: string, count: number) => {
    const file = join(dir, name)
    await writeFile(file, toJsonLines({ ...versioned(1, { count }), languages: { ...versioned(1, { count }).languages, es: [makeItem(500, '2024-02-01', [1])] } }))
    return file
  }
  t.equal((await run(['--to', to, '--snapshot', await write('snap-a.jsonl', 100)])).code, 0)
  const fewer = await run(['--to', to, '--snapshot', await write('snap-b.jsonl', 70)])
  t.equal(fewer.code, 1)
  t.equal(fewer.stderr, `${join(dir, 'snap-b.jsonl')} may be a broken export: en has 70 items, 30% fewer than the 100 published (--max-change 10%)\nnothing published (--force publishes it anyway)\n`)
  t.notOk((await readdir(to)).includes('snap-b.jsonl'), 'nothing sent')
  t.equal((await run(['--to', to, '--snapshot', join(dir, 'snap-b.jsonl'), '--max-change', '35'])).code, 0, 'within a wider limit')
  const emptied = join(dir, 'snap-c.jsonl')
  await writeFile(emptied, toJsonLines({ ...versioned(1, { count: 70 }), languages: { ...versioned(1, { count: 70 }).languages, es: [] } }))
  const none = await run(['--to', to, '--snapshot', emptied])
  t.match(none.stderr, 'es has no items, where 1 are published')
  const forced = await run(['--to', to, '--snapshot', emptied, '--force'])
  t.equal(forced.code, 0, forced.stderr)
  t.same(JSON.parse(await readFile(join(to, 'manifest.json'), 'utf8')).items, { en: 70, es: 0 })
  const misused = await run(['--to', to, '--changes', emptied, '--force'])
  t.equal(misused.code, 2)
  t.match(misused.stderr, '--max-change, --force and --no-image go with --snapshot FILE')
})

t.test('refusals: a bad file, a name reused with other bytes, a name the manifest cannot hold, no manifest there; exit 1 and nothing written', async t => {
  const { dir, snapshot, first, change } = await files(t)
  const to = join(await tempDir(t), 'fleet')
  t.equal((await run(['--to', to, '--snapshot', snapshot])).code, 0)
  const before = await readFile(join(to, 'manifest.json'), 'utf8')

  const bad = join(dir, 'chg-bad.jsonl')
  await writeFile(bad, `${JSON.stringify({ changes: 'explore', version: 1, id: 'bad' })}\n{"op": "upsert", "language": "en", "pk": 3}\n`)
  const invalid = await run(['--to', to, '--changes', bad])
  t.equal(invalid.code, 1)
  t.match(invalid.stderr, 'chg-bad.jsonl:2: is_translated: is required')
  t.match(invalid.stderr, /nothing published\n$/)

  const badSnapshot = join(dir, 'snap-bad.jsonl')
  await writeFile(badSnapshot, '{"language": "en", "pk": 1}\n')
  t.equal((await run(['--to', to, '--snapshot', badSnapshot])).code, 1)

  // chg-0001.jsonl published, then stepped back from; another file under its name is refused.
  t.equal((await run(['--to', to, '--changes', first])).code, 0)
  t.equal((await run(['--to', to, '--step-back', '1'])).code, 0)
  const other = join(await tempDir(t), 'chg-0001.jsonl')
  await writeFile(other, change('chg-0001', 'other bytes'))
  const reused = await run(['--to', to, '--changes', other])
  t.equal(reused.code, 1)
  t.match(reused.stderr, 'chg-0001.jsonl is already published in')
  t.match(reused.stderr, 'with other content: objects are immutable once published, so publish this one under another name')
  t.equal(await readFile(join(to, 'chg-0001.jsonl'), 'utf8'), await readFile(first, 'utf8'), 'the published object is untouched')

  const spaced = join(dir, 'chg 3.jsonl')
  await writeFile(spaced, change('chg-3', 'spaced'))
  const unnamed = await run(['--to', to, '--changes', spaced])
  t.equal(unnamed.code, 1)
  t.match(unnamed.stderr, 'chg 3.jsonl cannot be published under its name: changes[0]: "chg 3.jsonl" is not a change file\'s name')

  t.equal(await readFile(join(to, 'manifest.json'), 'utf8'), before, 'the manifest is as it was')
  t.same((await readdir(to)).filter(name => !name.endsWith('.image')).sort(), ['chg-0001.jsonl', 'manifest.json', 'snap-0001.jsonl'], 'no refused object uploaded')
  t.equal((await readdir(to)).filter(name => name.endsWith('.image')).length, 1, 'nor a refused snapshot\'s image')

  const broken = await tempDir(t)
  await writeFile(join(broken, 'manifest.json'), '{"manifest": "explore"}')
  const notOne = await run(['--to', broken, '--changes', first])
  t.equal(notOne.code, 1)
  t.match(notOne.stderr, 'manifest.json is not a manifest (version: is required; snapshot: is required; changes: is required): fix or remove it first')
})

t.test('usage: each mistake is exit 2 with the message; --help is exit 0', async t => {
  const { snapshot, first } = await files(t)
  const to = await tempDir(t)
  for (const [args, message] of [
    [['--snapshot', snapshot], '--to s3://bucket/prefix/ or --to DIR is required'],
    [['--to', to], 'give one of --snapshot FILE, --changes FILE, --step-back N'],
    [['--to', to, '--snapshot', snapshot, '--changes', first], 'give one of --snapshot FILE, --changes FILE, --step-back N'],
    [['--to', to, '--step-back', '0'], '--step-back must be a whole number of changes, 1 or more; got "0"'],
    [['--to', to, snapshot], 'unexpected argument'],
    [['--to', 'https://example.com/fleet/', '--snapshot', snapshot], 'a destination is s3://bucket/prefix/ or a directory'],
    [['--to', to, '--bogus'], 'Unknown option \'--bogus\'']
  ] as Array<[string[], string]>) {
    const result = await run(args)
    t.equal(result.code, 2, args.join(' '))
    t.match(result.stderr, message)
    t.match(result.stderr, 'Run explore-replica publish --help for the options.')
  }
  const help = await run(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: explore-replica publish --to DEST \(--snapshot FILE \| --changes FILE \| --step-back N\)/)
})

t.test('a manifest another publisher replaced meanwhile is not overwritten', async t => {
  const dir = await tempDir(t)
  const target = new DirectoryTarget(dir)
  const text = (snapshot: string) => JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes: [] })
  await target.writeManifest(text('a.jsonl'), null)
  const read = await target.readManifest()
  await writeFile(join(dir, 'manifest.json'), text('b.jsonl'))
  await t.rejects(target.writeManifest(text('c.jsonl'), read), new PublishError(`${join(dir, 'manifest.json')} changed while this was published (another publisher?): nothing replaced; run again`))
  t.equal(await readFile(join(dir, 'manifest.json'), 'utf8'), text('b.jsonl'))
})

if (spawnSync(MOTO, ['--help'], { stdio: 'ignore' }).status !== 0) {
  t.test('publish to S3', { skip: 'moto_server is not installed (pip install \'moto[server]\', or set MOTO_SERVER)' }, () => {})
} else {
  t.test('to S3: objects created once, the manifest replaced only if it is the one read', async t => {
    const port = await freePort()
    const endpoint = `http://127.0.0.1:${port}`
    const moto = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
    t.teardown(() => { moto.kill() })
    await new Promise<void>((resolve, reject) => {
      moto.once('exit', code => reject(new Error(`moto_server exited (${code ?? 'signal'})`)))
      moto.stderr.on('data', (chunk: Buffer) => { if (/Running on/.test(chunk.toString())) resolve() })
    })
    const aws = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: endpoint }
    Object.assign(process.env, aws)
    const s3 = new S3Client({ forcePathStyle: true })
    t.teardown(() => s3.destroy())
    await s3.send(new CreateBucketCommand({ Bucket: 'fleet' }))
    const get = async (key: string) => await (await s3.send(new GetObjectCommand({ Bucket: 'fleet', Key: key }))).Body?.transformToString()

    const { snapshot, first, change } = await files(t)
    const s3run = (args: string[]) => run([...args, '--s3-force-path-style'], aws)
    const published = await s3run(['--to', 's3://fleet/explore/', '--snapshot', snapshot])
    t.equal(published.code, 0, published.stderr)
    t.match(published.stdout, /^Uploaded snap-0001\.jsonl; s3:\/\/fleet\/explore\/manifest\.json now lists snap-0001\.jsonl \(its image [0-9a-f]{32}\.image\) and no changes/)
    t.equal((await s3run(['--to', 's3://fleet/explore', '--changes', first])).code, 0, 'the prefix with or without its slash')
    const image = JSON.parse(await get('explore/manifest.json') ?? '').image
    t.same(JSON.parse(await get('explore/manifest.json') ?? ''), { manifest: 'explore', version: 1, snapshot: 'snap-0001.jsonl', changes: ['chg-0001.jsonl'], image, items: { en: 21 } })
    const imageHead = await s3.send(new HeadObjectCommand({ Bucket: 'fleet', Key: `explore/${image.name as string}` }))
    t.equal(imageHead.ContentType, 'application/octet-stream', 'the image uploaded beside the snapshot')
    t.equal(await get('explore/chg-0001.jsonl'), await readFile(first, 'utf8'))

    t.equal((await s3run(['--to', 's3://fleet/explore/', '--step-back', '1'])).code, 0)
    const other = join(await tempDir(t), 'chg-0001.jsonl')
    await writeFile(other, change('chg-0001', 'other bytes'))
    const reused = await s3run(['--to', 's3://fleet/explore/', '--changes', other])
    t.equal(reused.code, 1)
    t.match(reused.stderr, 's3://fleet/explore/chg-0001.jsonl is already published with other content')
    const same = await s3run(['--to', 's3://fleet/explore/', '--changes', first])
    t.match(same.stdout, /^Already there, the same bytes: chg-0001\.jsonl;/)

    const missing = await s3run(['--to', 's3://no-such-bucket/explore/', '--snapshot', snapshot])
    t.equal(missing.code, 1)
    t.match(missing.stderr, 'the bucket does not exist')

    // Two publishers: the one that read the manifest first finds it replaced, and replaces nothing.
    const target = new S3Target(new URL('s3://fleet/explore/'), { forcePathStyle: true })
    t.teardown(() => target.close())
    const read = await target.readManifest()
    await s3.send(new PutObjectCommand({ Bucket: 'fleet', Key: 'explore/manifest.json', Body: JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-0001.jsonl', changes: [] }) }))
    await t.rejects(target.writeManifest('{}', read), { message: 's3://fleet/explore/manifest.json changed while this was published (another publisher?): nothing replaced; run again' })
    t.same(JSON.parse(await get('explore/manifest.json') ?? '').changes, [], 'the other publisher\'s manifest stands')

    // A file over one part (5 MiB) goes up in parts, and keeps the same promises as one PutObject.
    const big = join(await tempDir(t), 'big.jsonl')
    const bytes = randomBytes(11 * 1024 * 1024)
    await writeFile(big, bytes)
    t.equal(await target.putObject('big.jsonl', big), 'uploaded')
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'fleet', Key: 'explore/big.jsonl' }))
    t.match(head.ETag, /-3"$/, 'a multipart upload of three parts')
    const stored = await (await s3.send(new GetObjectCommand({ Bucket: 'fleet', Key: 'explore/big.jsonl' }))).Body?.transformToByteArray()
    t.ok(stored !== undefined && Buffer.from(stored).equals(bytes), 'its bytes, in order')
    t.equal(head.ETag, `"${await multipartEtagOf(big, 5 * 1024 * 1024)}"`, 'the store\'s ETag is the parts\' digest, computed here alike')
    let downloads = 0
    target['client'].middlewareStack.add((next, context) => async args => {
      if (context.commandName === 'GetObjectCommand') downloads++
      return await next(args)
    }, { step: 'initialize' })
    t.equal(await target.putObject('big.jsonl', big), 'present', 'the same bytes again: no error')
    t.equal(downloads, 0, 'told by the ETag, with no download')
    const otherBig = join(await tempDir(t), 'big.jsonl')
    await writeFile(otherBig, randomBytes(11 * 1024 * 1024))
    await t.rejects(target.putObject('big.jsonl', otherBig), { message: 's3://fleet/explore/big.jsonl is already published with other content: objects are immutable once published, so publish this one under another name' })
    const kept = await (await s3.send(new GetObjectCommand({ Bucket: 'fleet', Key: 'explore/big.jsonl' }))).Body?.transformToByteArray()
    t.ok(kept !== undefined && Buffer.from(kept).equals(bytes), 'the published object untouched')
    t.same((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'fleet' }))).Uploads ?? [], [], 'the refused upload aborted, no parts left behind')
  })
}
