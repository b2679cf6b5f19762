import t, { type Test } from 'tap'
import { mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { once } from 'node:events'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../../src/app.js'
import { loadConfig, type Config } from '../../../src/config.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { ImageShelf } from '../../../src/snapshot/images/image-shelf.js'
import type { MemoryGuard, ParsedFormat } from '../../../src/snapshot/memory-budget.js'
import { SnapshotStore } from '../../../src/snapshot/store/snapshot-store.js'
import { EXPLORE, makeItem, memoryFreed, reloadFile, smallSnapshot, tempDir, toJsonLines, versioned } from '../../helpers.js'

const PATHS = [
  EXPLORE,
  `${EXPLORE}?companies=7&limit=3&offset=2`,
  `${EXPLORE}?companies=8,9&limit=4`,
  `${EXPLORE}?limit=2&offset=20`,
  '/es/api/internal/explore/?limit=1'
]

interface Setup {
  start: (overrides?: Partial<Config>) => Promise<FastifyInstance>
  snapshotPath: string
  changesDir: string
  imagesDir: string
}

async function setup (t: Test): Promise<Setup> {
  const dir = await tempDir(t)
  const snapshotPath = join(dir, 'snapshot.json')
  await writeFile(snapshotPath, JSON.stringify(smallSnapshot()))
  const changesDir = join(dir, 'changes')
  const start = async (overrides: Partial<Config> = {}): Promise<FastifyInstance> => {
    const app = await buildApp(loadConfig({
      overrides: { logLevel: 'silent', snapshotPath, changesDir, watch: false, stateDir: join(dir, 'state'), ...overrides }
    }))
    t.teardown(() => app.close())
    await app.snapshots.start()
    // The image is written in the background once the snapshot is served.
    await app.snapshots.images!.idle()
    return app
  }
  return { start, snapshotPath, changesDir, imagesDir: join(dir, 'state', 'images') }
}

/** Each path's status, ETag and body: what a client could tell two versions apart by. */
async function answers (app: FastifyInstance): Promise<Array<{ status: number, etag: unknown, body: string }>> {
  const all = []
  for (const url of PATHS) {
    const res = await app.inject(url)
    all.push({ status: res.statusCode, etag: res.headers.etag, body: res.body })
  }
  return all
}

async function status (app: FastifyInstance): Promise<any> {
  return (await app.inject('/-/status')).json()
}

t.test('a restart reads the version image a parse wrote, and serves the same bytes', async t => {
  const { start, snapshotPath, imagesDir } = await setup(t)
  const first = await start()
  const parsed = await answers(first)
  t.equal((await status(first)).snapshot.imageMs, null, 'the first start parses')
  t.match((await status(first)).reloads.images, { read: 0, written: 1, refused: 0 })
  await first.close()
  t.equal((await readdir(imagesDir)).filter(name => name.endsWith('.image')).length, 1)

  const second = await start()
  t.same(await answers(second), parsed, 'byte for byte, ETags included')
  const now = await status(second)
  t.type(now.snapshot.imageMs, 'number', 'read from the image')
  t.match(now.reloads.images, { read: 1, written: 0, refused: 0 })
  t.match((await second.inject('/-/metrics')).body, /explore_snapshot_images_total\{outcome="read"\} 1/)
  await second.close()

  // Other content under the same name: its image is not the file's, so the file is parsed.
  await writeFile(snapshotPath, JSON.stringify(versioned(2)))
  const third = await start()
  t.equal((await status(third)).snapshot.imageMs, null)
  t.equal((await status(third)).snapshot.items.en, 22)
})

t.test('a version derived by change files from an image serves what one from a parse serves', async t => {
  const { start, changesDir } = await setup(t)
  await mkdir(changesDir)
  const header = JSON.stringify({ changes: 'explore', version: 1, id: 'c1' })
  const upsert = JSON.stringify({ op: 'upsert', language: 'en', ...makeItem(900, '2024-01-09', [7, 9]) })
  const remove = JSON.stringify({ op: 'delete', language: 'en', pk: 3 })
  await writeFile(join(changesDir, '0001.jsonl'), `${header}\n${upsert}\n${remove}\n`)
  const first = await start()
  const parsed = await answers(first)
  t.match((await status(first)).snapshot, { imageMs: null, changes: [{ id: 'c1' }] })
  await first.close()
  const second = await start()
  t.same(await answers(second), parsed)
  t.match((await status(second)).snapshot, { imageMs: Number, changes: [{ id: 'c1' }] })
})

t.test('a damaged image is refused with its reason, removed, and the snapshot parsed', async t => {
  const { start, imagesDir } = await setup(t)
  const first = await start()
  const parsed = await answers(first)
  await first.close()
  const [name] = await readdir(imagesDir)
  const image = join(imagesDir, name as string)
  const bytes = await readFile(image)
  // A bit of the first section, the items' bytes: past the prefix, the header says where it is.
  const header = JSON.parse(bytes.subarray(24, 24 + bytes.readUInt32LE(12)).toString()) as { sections: Array<{ offset: number }> }
  const at = header.sections[0]!.offset + 10
  bytes.writeUInt8(bytes.readUInt8(at) ^ 0x40, at)
  await writeFile(image, bytes)
  const second = await start()
  t.same(await answers(second), parsed)
  const now = await status(second)
  t.equal(now.snapshot.imageMs, null, 'parsed')
  t.match(now.reloads.images, { read: 0, refused: 1, written: 1 }, 'refused, then written again from the parse')
})

t.test('a rollback to a version not in memory reads its image', async t => {
  const { start, snapshotPath } = await setup(t)
  const app = await start()
  const before = await answers(app)
  await writeFile(snapshotPath, JSON.stringify(versioned(2)))
  t.equal(await reloadFile(app), 'loaded')
  await app.snapshots.images!.idle()
  t.equal((await status(app)).snapshot.items.en, 22)
  await app.snapshotVersions.rollback()
  t.same(await answers(app), before, 'the version before, byte for byte')
  t.type((await status(app)).snapshot.imageMs, 'number', 'from its image, not its kept file parsed')
  await app.close()
  // A pinned replica restarted serves the pinned version's kept files: from their image too.
  const restarted = await start()
  t.match(await status(restarted), { pin: { version: String }, snapshot: { imageMs: Number } })
  t.same(await answers(restarted), before)
})

t.test('a write that never reached its rename leaves nothing that is read, and is cleared once its process is gone', async t => {
  const { start, imagesDir } = await setup(t)
  const first = await start()
  await first.close()
  const [name] = await readdir(imagesDir)
  // A crash between the write and the rename: the whole image under its temporary name, and no image.
  const version = (name as string).slice(0, -'.image'.length)
  const leftover = join(imagesDir, `.${version}.999999999.tmp`)
  await writeFile(leftover, await readFile(join(imagesDir, name as string)))
  await rm(join(imagesDir, name as string))
  const second = await start()
  t.equal((await status(second)).snapshot.imageMs, null, 'parsed')
  t.same((await readdir(imagesDir)).sort(), [name], 'written again; the dead process\'s temporary file removed at the start')
})

t.test('a shutdown does not wait for an image being written: the write stops and leaves no file', async t => {
  const { snapshotPath, changesDir, imagesDir } = await setup(t)
  const app = await buildApp(loadConfig({
    overrides: { logLevel: 'silent', snapshotPath, changesDir, watch: false, stateDir: join(imagesDir, '..') }
  }))
  await app.snapshots.start()
  // The image's write was asked for as the snapshot was served, and has not ended: the close stops it.
  await app.close()
  t.same(await readdir(imagesDir).catch(() => []), [], 'no image, no temporary file')
})

t.test('an image found by its file\'s stamp is confirmed by the file\'s bytes: other bytes under the same stamp are read again and served', async t => {
  const { start, snapshotPath, imagesDir } = await setup(t)
  // A time to put back: a file restored with its old time, a build that stamps every file alike.
  const when = new Date('2026-01-01T00:00:00Z')
  await utimes(snapshotPath, when, when)
  const first = await start()
  const old = (await status(first)).snapshot.version as string
  await first.close()
  // Other bytes of the same size, written in place (the same inode), the time put back: the same stamp.
  const text = await readFile(snapshotPath, 'utf8')
  await writeFile(snapshotPath, text.replace('"Item 1"', '"Item X"'))
  await utimes(snapshotPath, when, when)
  const second = await buildApp(loadConfig({
    overrides: { logLevel: 'silent', snapshotPath, watch: false, stateDir: join(imagesDir, '..') }
  }))
  t.teardown(() => second.close())
  const served = once(second.snapshots, 'served')
  await second.snapshots.start()
  const [firstServed] = await served as [SnapshotModel]
  t.match(firstServed.info, { version: old, fromImage: { ms: Number } }, 'the image is served first, found by the stamp')
  await once(second.snapshots, 'served')
  const now = await status(second)
  t.not(now.snapshot.version, old, 'then the file read again: its own version')
  t.equal(now.snapshot.imageMs, null, 'parsed')
  const page = (await second.inject(`${EXPLORE}?limit=100`)).json() as { results: Array<{ pk: number, translated_title: string }> }
  t.equal(page.results.find(item => item.pk === 1)?.translated_title, 'Item X', 'its bytes served')
  await second.snapshots.images!.idle()
  t.same(await readdir(imagesDir), [`${now.snapshot.version as string}.image`], 'the image of other bytes removed, the file\'s own written')
})

t.test('a large file\'s bytes are confirmed on a thread of their own: other bytes under the same stamp are found there too', async t => {
  const dir = await tempDir(t)
  const snapshotPath = join(dir, 'snapshot.jsonl')
  // ~20 MB: past the size whose digest is taken on a thread (DIGEST_BEHIND_FROM_BYTES).
  const text = toJsonLines(versioned(1, { count: 20_000, abstract: 'x'.repeat(900) }))
  t.ok(Buffer.byteLength(text) > 16 * 1024 * 1024)
  await writeFile(snapshotPath, text)
  const when = new Date('2026-01-01T00:00:00Z')
  await utimes(snapshotPath, when, when)
  const config = loadConfig({ overrides: { logLevel: 'silent', snapshotPath, watch: false, stateDir: join(dir, 'state') } })
  const first = await buildApp(config)
  await first.snapshots.start()
  await first.snapshots.images!.idle()
  const old = (await status(first)).snapshot.version as string
  await first.close()
  await writeFile(snapshotPath, text.replace('"v1 item 1"', '"v1 item X"'))
  await utimes(snapshotPath, when, when)
  const second = await buildApp(config)
  t.teardown(() => second.close())
  const served = once(second.snapshots, 'served')
  await second.snapshots.start()
  t.match((await served as [SnapshotModel])[0].info, { version: old, fromImage: { ms: Number } }, 'the image first')
  await once(second.snapshots, 'served')
  const now = await status(second)
  t.not(now.snapshot.version, old, 'then the file read again')
  t.equal(now.snapshot.imageMs, null, 'parsed')
  const { fileDigest } = await import('../../../src/snapshot/store/serve-chain.js')
  t.equal(await fileDigest(snapshotPath), now.snapshot.version, 'the thread\'s digest is the version a load takes')
  t.equal(await fileDigest(snapshotPath, 'follow', new AbortController().signal), now.snapshot.version, 'in the background too')
  const stopped = new AbortController()
  const digest = fileDigest(snapshotPath, 'follow', stopped.signal)
  stopped.abort()
  await t.rejects(digest, 'stopped when aborted')
})

t.test('a damaged image\'s arrays are given back before the parse asks the memory budget: they would count as used', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.jsonl')
  // ~40 MB: an image whose read shows in RSS.
  await writeFile(file, toJsonLines(versioned(1, { count: 40_000, abstract: 'x'.repeat(900) })))
  const imagesDir = join(dir, 'images')
  const silent = { info () {}, warn () {}, error () {} }
  const made = new ImageShelf(imagesDir, silent)
  const first = await new SnapshotStore(file, { images: made }).start()
  await made.idle()
  first.memory.retire()
  // Gone before RSS is compared.
  await memoryFreed(first.memory)
  const [name] = await readdir(imagesDir)
  const image = join(imagesDir, name as string)
  const bytes = await readFile(image)
  // Its last section damaged: the whole image is read before the refusal.
  const header = JSON.parse(bytes.subarray(24, 24 + bytes.readUInt32LE(12)).toString()) as { sections: Array<{ offset: number, length: number }> }
  const last = header.sections.filter(section => section.length > 0).at(-1)!
  bytes.writeUInt8(bytes.readUInt8(last.offset) ^ 0x40, last.offset)
  await writeFile(image, bytes)
  // The budget's questions, and the array memory V8 holds when each is asked.
  const asked: Array<{ format: ParsedFormat | 'image', arrays: number }> = []
  const guard: MemoryGuard = {
    budget: { bytes: 64 * 1024 ** 3, source: 'MEMORY_LIMIT_MB' },
    admit: async (_file, _bytes, format) => {
      asked.push({ format, arrays: process.memoryUsage().arrayBuffers })
      return { check () {} }
    }
  }
  const images = new ImageShelf(imagesDir, silent, guard)
  const model = await new SnapshotStore(file, { images, memory: guard }).start()
  t.teardown(() => model.memory.retire())
  t.equal(model.info.fromImage, undefined, 'parsed')
  const [read, parse] = asked
  t.match(asked.map(({ format }) => format), ['image', 'jsonl'])
  // Not RSS: the allocator may keep freed pages resident (55 MB in 1 of 6 runs, the arrays freed), and reuses them.
  t.ok(parse!.arrays - read!.arrays < bytes.length / 4,
    `array memory at the parse's question ${Math.round((parse!.arrays - read!.arrays) / 1e6)} MB above the image's (${Math.round(bytes.length / 1e6)} MB read and refused)`)
})

t.test('a model served after the close began writes no image: not even its directory is made', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(versioned(1)))
  const model = await new SnapshotStore(file).start()
  t.teardown(() => model.memory.retire())
  const imagesDir = join(dir, 'images')
  const logged: string[] = []
  const log = { info (_fields: object, message: string) { logged.push(message) }, warn () {}, error () {} }
  const images = new ImageShelf(imagesDir, log)
  await images.close()
  images.write(model, 'a stamp')
  await images.idle()
  t.same(await readdir(dir), ['snapshot.json'])
  t.same(logged, ['the version image is not written: the service stops'])
})
