// Version images (src/snapshot/images/version-image.ts, ADR 033): a version read back is the one written, array for
// array, and a damaged or lying image is refused with its reason; an image says what made its bytes
// (image-fingerprint.ts, ADR 043): code that renders otherwise, its release unchanged, never serves an old image's bytes.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { open, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { crc32 } from 'node:zlib'
import fastJson from 'fast-json-stringify'
import { Type } from '@sinclair/typebox'
import { ImageError } from '../../../src/errors.js'
import { ContentItemSchema } from '../../../src/schemas/content-item.js'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { forSerializer } from '../../../src/schemas/serializer-schema.js'
import {
  currentRendering, FINGERPRINT, IMAGE_FORMAT, LOADED, renderingFingerprint, type Rendering
} from '../../../src/snapshot/images/image-fingerprint.js'
import { ImageShelf } from '../../../src/snapshot/images/image-shelf.js'
import { checksums, readImage, readImageHeader, writeImage, type ImageHeader } from '../../../src/snapshot/images/version-image.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { PART_KINDS } from '../../../src/snapshot/model/version-arrays.js'
import { partsOf } from '../../../src/snapshot/model/version-parts.js'
import { SnapshotStore } from '../../../src/snapshot/store/snapshot-store.js'
import { makeItem, modelOf, smallSnapshot, tempDir, writeSnapshot } from '../../helpers.js'
import { runs } from '../../property-runs.js'

// src/snapshot/images/version-image.ts: an image written and read back, and every way its bytes can be wrong.
/** A snapshot of two languages, many companies, items of every size: every kind of array an image holds. */
function snapshot (): unknown {
  const items = (language: string, count: number) => Array.from({ length: count }, (_, n) =>
    makeItem(n + 1, `2024-01-${String(1 + (n % 28)).padStart(2, '0')}`, [n % 7, 100 + (n % 3)],
      { translated_title: `${language} item ${n} ${'x'.repeat(n * 13 % 300)}` }))
  return { generated_at: '2024-02-01T00:00:00Z', languages: { en: items('en', 120), de: items('de', 40) } }
}

/** Every array of a version, as bytes, and its names and numbers: what two equal versions share. */
function contentOf (model: SnapshotModel): string {
  return JSON.stringify(partsOf(model), (key, value: unknown) => {
    if (key === 'loadedAt' || key === 'source') return undefined
    return ArrayBuffer.isView(value) ? `${value.constructor.name}:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}` : value
  })
}

async function imageOf (t: Test, model: SnapshotModel): Promise<{ file: string, bytes: Buffer }> {
  const file = join(await tempDir(t), 'snapshot.image')
  await writeImage(file, model, '1:2:3:4')
  return { file, bytes: await readFile(file) }
}

/** The image at `file` read back: its model, or the ImageError that refused it. */
async function readBack (file: string): Promise<SnapshotModel | ImageError> {
  const handle = await open(file, 'r')
  try {
    return await readImage(handle, await readImageHeader(handle), file)
  } catch (error) {
    if (error instanceof ImageError) return error
    throw error
  } finally {
    await handle.close()
  }
}

/** An image of snapshot(), and what reading it says once its bytes are `changed`: the refusal, or 'read'. */
async function refusals (t: Test): Promise<{ bytes: Buffer, refusal: (changed: Buffer) => Promise<string> }> {
  const { file, bytes } = await imageOf(t, await modelOf(snapshot()))
  const refusal = async (changed: Buffer): Promise<string> => {
    await writeFile(file, changed)
    const read = await readBack(file)
    return read instanceof ImageError ? read.message : 'read'
  }
  return { bytes, refusal }
}

const HEADER_AT = 24

function flip (bytes: Buffer, at: number, mask: number): void {
  bytes.writeUInt8(bytes.readUInt8(at) ^ mask, at)
}

function headerOf (bytes: Buffer): ImageHeader {
  return JSON.parse(bytes.subarray(HEADER_AT, HEADER_AT + bytes.readUInt32LE(12)).toString('utf8')) as ImageHeader
}

/** `bytes` with its header changed by `change`, its checksum made right again: only the layout's checks catch it. */
function withHeader (bytes: Buffer, change: (header: ImageHeader) => void): Buffer {
  const header = headerOf(bytes)
  change(header)
  const text = Buffer.from(JSON.stringify(header))
  const out = Buffer.from(bytes)
  out.fill(0, HEADER_AT, header.sections[0]?.offset ?? out.length)
  text.copy(out, HEADER_AT)
  out.writeUInt32LE(text.length, 12)
  out.writeUInt32LE(crc32(text), 16)
  return out
}

/** `bytes` with section `n`'s contents changed by `change` and its checksum made right again. */
function withSection (bytes: Buffer, n: number, change: (section: Buffer) => void): Buffer {
  const out = Buffer.from(bytes)
  const section = headerOf(out).sections[n] as ImageHeader['sections'][number]
  const size = { u8: 1, u16: 2, u32: 4, i32: 4, f64: 8 }[section.kind]
  change(out.subarray(section.offset, section.offset + section.length * size))
  return withHeader(out, header => {
    const changed = header.sections[n] as ImageHeader['sections'][number]
    changed.crc = crc32(out.subarray(section.offset, section.offset + section.length * size))
  })
}

/** The first section of a part: a listing's column by its name, or its company table's. */
function sectionOf (bytes: Buffer, part: string): number {
  type Refs = Record<string, { section: number }>
  const listing = headerOf(bytes).parts.listings[0] as unknown as Refs & { companies: Refs }
  return (listing[part] ?? listing.companies[part] as { section: number }).section
}

t.test('a version read back from its image is the version written, array for array', async t => {
  const model = await modelOf(snapshot())
  const { file } = await imageOf(t, model)
  const read = await readBack(file)
  t.notOk(read instanceof ImageError, 'read')
  t.equal(contentOf(read as SnapshotModel), contentOf(model))
  const page = (version: SnapshotModel) => Buffer.concat([...(version.language('en')!.page([3], 5, 20).items.views())]).toString()
  t.equal(page(read as SnapshotModel), page(model), 'a page is the same bytes')
  t.equal((read as SnapshotModel).info.source, file, 'named for the file it was read for')
})

t.test('an image is refused with its reason: magic, format, header, truncation, a flipped bit', async t => {
  const { bytes, refusal } = await refusals(t)
  const otherMagic = Buffer.from(bytes)
  otherMagic.write('NOTANIMG', 0, 'latin1')
  t.equal(await refusal(otherMagic), 'not a version image (its magic is wrong)')
  const otherFormat = Buffer.from(bytes)
  otherFormat.writeUInt32LE(IMAGE_FORMAT + 1, 8)
  t.equal(await refusal(otherFormat), `image format ${IMAGE_FORMAT + 1}; this replica reads format ${IMAGE_FORMAT}`)
  const flippedHeader = Buffer.from(bytes)
  flip(flippedHeader, HEADER_AT + 3, 1)
  t.equal(await refusal(flippedHeader), 'its header\'s checksum does not match')
  t.equal(await refusal(bytes.subarray(0, 10)), 'the file is shorter than an image\'s prefix')
  const sections = headerOf(bytes).sections
  for (const [n, section] of sections.entries()) {
    if (section.length === 0) continue
    t.match(await refusal(bytes.subarray(0, section.offset)), /runs past the end of the file|its header runs past/, `cut at section ${n}`)
  }
  const last = sections.at(-1)!
  const flipped = Buffer.from(bytes)
  flip(flipped, last.offset, 0x10)
  t.equal(await refusal(flipped), `section ${sections.length - 1}'s checksum does not match`)
})

t.test('a damaged section ends the read there: the sections after it are not read', async t => {
  const { file, bytes } = await imageOf(t, await modelOf(snapshot()))
  const { sections } = headerOf(bytes)
  const size = { u8: 1, u16: 2, u32: 4, i32: 4, f64: 8 }
  const bytesOf = (n: number) => sections[n]!.length * size[sections[n]!.kind]
  const flipped = Buffer.from(bytes)
  flip(flipped, sections[0]!.offset, 0x10)
  await writeFile(file, flipped)
  const handle = await open(file, 'r')
  t.teardown(() => handle.close())
  const header = await readImageHeader(handle)
  // The real handle, its reads counted.
  let read = 0
  const counted = new Proxy(handle, {
    get (target, key) {
      if (key === 'read') {
        return async (...args: Parameters<typeof handle.read>) => {
          const done = await target.read(...args)
          read += done.bytesRead
          return done
        }
      }
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
  await t.rejects(readImage(counted, header, file), { message: 'section 0\'s checksum does not match' })
  // The two read ahead (READS_AHEAD) may have been asked for already; nothing after them.
  t.ok(read <= bytesOf(0) + bytesOf(1) + bytesOf(2), `read ${read} of ${sections.reduce((sum, _, n) => sum + bytesOf(n), 0)} bytes`)
})

t.test('a bit flipped anywhere: refused, or (in padding no section holds) the same version', async t => {
  const model = await modelOf(snapshot())
  const { file, bytes } = await imageOf(t, model)
  const expected = contentOf(model)
  await fc.assert(fc.asyncProperty(fc.nat({ max: bytes.length * 8 - 1 }), async bit => {
    const changed = Buffer.from(bytes)
    flip(changed, bit >>> 3, 1 << (bit & 7))
    await writeFile(file, changed)
    const read = await readBack(file)
    return read instanceof ImageError || contentOf(read) === expected
  }), { numRuns: runs(300) })
})

t.test('a header that checks out but lies: offsets and lengths past the file, sections it lacks', async t => {
  const { bytes, refusal } = await refusals(t)
  const n = sectionOf(bytes, 'startOf')
  t.equal(await refusal(withHeader(bytes, header => { header.sections[n]!.room = 1e12 })),
    `section ${n} is not where an image puts one`, 'room no column has')
  t.equal(await refusal(withHeader(bytes, header => {
    const last = header.sections.at(-1)!
    last.length += 1000
    last.room = last.length
  })),
    `section ${headerOf(bytes).sections.length - 1} runs past the end of the file`)
  t.equal(await refusal(withHeader(bytes, header => { header.sections[n]!.offset += 4 })), `section ${n} is not where an image puts one`)
  t.equal(await refusal(withHeader(bytes, header => { (header.sections[n] as { kind: string }).kind = 'u64' })),
    `section ${n} is not where an image puts one`)
  t.equal(await refusal(withHeader(bytes, header => { header.bytes += 8 })), 'its header\'s size is not its sections\' sum')
  t.match(await refusal(withHeader(bytes, header => { header.made.fingerprint = 'other' })),
    /^made by code that renders otherwise \(fingerprint other, explore-replica [^)]+\); this code's is /,
    'an image of code that renders otherwise is parsed again')
  t.equal(await refusal(withHeader(bytes, header => { header.made.by = '0.0.1' })), 'read',
    'another release that renders alike reads it: the release string does not decide')
  t.equal(await refusal(withHeader(bytes, header => { header.parts.listings[0]!.startOf = { section: 9999 } })),
    'it names section 9999, which it lacks')
  t.equal(await refusal(withHeader(bytes, header => { header.parts.listings[0]!.size += 1 })),
    'its parts do not describe a version: en: item 120 is empty', 'an item the columns have room for, but none')
  t.equal(await refusal(withHeader(bytes, header => { header.parts.listings[0]!.size += 1000 })),
    'its parts do not describe a version: en: columns shorter than its 1120 items')
  t.equal(await refusal(withHeader(bytes, header => {
    const listing = header.parts.listings[0]!
    listing.startOf = listing.pkOf
  })), 'its parts do not describe a version: en: a column of the wrong kind')
  t.equal(await refusal(withSection(bytes, n, section => { section.writeUInt32LE(0xffffff00, 0) })),
    'its parts do not describe a version: en: item 0 lies outside its chunk')
  t.equal(await refusal(withSection(bytes, sectionOf(bytes, 'slots'), section => { section.fill(1) })),
    'its parts do not describe a version: en: a company table of the wrong shape')
  t.equal(await refusal(withSection(bytes, sectionOf(bytes, 'ranks'), section => { section.writeUInt32LE(5000, 0) })),
    'its parts do not describe a version: en: a company lists an item it lacks')
})

t.test('checksums give the event loop a turn every 8 MiB across views, however small each view is', async t => {
  // 24 views of 1 MiB: none is a piece on its own, together they are three.
  const views = Array.from({ length: 24 }, (_, n) => new Uint8Array(1024 * 1024).fill(n))
  let turns = 0
  let ticking = true
  const tick = (): void => { if (ticking) { turns++; setImmediate(tick) } }
  setImmediate(tick)
  const sums = await checksums(views)
  ticking = false
  t.same(sums, views.map(view => crc32(view)), 'each view its own CRC-32')
  t.ok(turns >= 2, `${turns} turns while 24 MiB were checksummed`)
})

// src/snapshot/images/image-fingerprint.ts: the fingerprint is the code's, and an image of other code is parsed again.
/** The rendering a branch would have with `options` for the serializer: its samples rendered by it, as item-bytes.ts would. */
function withSerializerOptions (options: fastJson.Options): Rendering {
  const rendering = currentRendering()
  const schema = rendering.serializer.schema as object
  const serialize = fastJson(schema, options) as (item: SnapshotItem) => string
  return { ...rendering, serializer: { ...rendering.serializer, options }, render: item => serialize(item) }
}

t.test('the fingerprint is the code\'s: the same declaration gives the same, any part of it changed another', async t => {
  t.equal(renderingFingerprint(currentRendering()), FINGERPRINT, 'computed again, the same')
  t.match(FINGERPRINT, /^[A-Za-z0-9_-]{22}$/)
  const current = currentRendering()
  const changed: Array<[string, Rendering]> = [
    ['a serializer setting (integers rounded down)', withSerializerOptions({ rounding: 'floor' })],
    ['the item schema (a field added)', { ...current, itemSchema: Type.Composite([current.itemSchema as never, Type.Object({ added: Type.String() })]) }],
    ['the served item\'s schema', { ...current, serializer: { ...current.serializer, schema: forSerializer(Type.Omit(ContentItemSchema, ['series'])) } }],
    ['what the serializer writes (another escape)', { ...current, render: item => current.render(item).replaceAll('é', '\\u00e9') }],
    ['the serializer library', { ...current, serializer: { ...current.serializer, library: '0.0.0' } }],
    ['a version\'s arrays (a column of another kind)', { ...current, parts: { ...PART_KINDS, columns: { ...PART_KINDS.columns, dateOf: ['f64'] } } }],
    ['the image format', { ...current, format: current.format + 1 }]
  ]
  for (const [what, rendering] of changed) t.not(renderingFingerprint(rendering), FINGERPRINT, what)
})

t.test('a branch that builds otherwise, rendering alike, has another fingerprint', async t => {
  // As if it listed every item under one language: the items' bytes unchanged, the arrays not.
  const addRendered = SnapshotModelBuilder.prototype.addRendered
  SnapshotModelBuilder.prototype.addRendered = function (this: SnapshotModelBuilder, _language, ...rest) {
    return addRendered.call(this, 'en', ...rest)
  }
  try {
    t.not(renderingFingerprint(currentRendering()), FINGERPRINT)
  } finally {
    SnapshotModelBuilder.prototype.addRendered = addRendered
  }
  t.equal(renderingFingerprint(currentRendering()), FINGERPRINT, 'and the code\'s own again once undone')
})

t.test('the builder\'s part is a real load of its samples: both languages, every item, in the served order', async t => {
  const { listings } = JSON.parse(currentRendering().build(LOADED)) as { listings: Array<{ code: string, size: number, pkOf: string }> }
  t.same(listings.map(({ code, size }) => [code, size]), [['en', 3], ['fr', 2]])
  const pks = (column: string) => {
    const bytes = Buffer.from(column.split(' ')[1] as string, 'base64')
    return [...new Float64Array(bytes.buffer, bytes.byteOffset, bytes.length / 8)]
  }
  t.same(pks((listings[0] as { pkOf: string }).pkOf).slice(0, 3), [8, 2 ** 53 - 1, 2 ** 40], 'newest first, then the larger pk')
})

t.test('a branch that renders otherwise, its release unchanged, refuses the image the code before it made, and parses', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const dir = dirname(file)
  const imagesDir = join(dir, 'images')
  const logged: string[] = []
  const log = { info () {}, error () {}, warn (fields: object, message: string) { logged.push(`${message}: ${(fields as { problem?: string }).problem ?? ''}`) } }
  const serve = async (fingerprint: string) => {
    const images = new ImageShelf(imagesDir, log, null, fingerprint)
    const store = new SnapshotStore(file, { images, log })
    const model = await store.start()
    await images.idle()
    return model
  }
  const before = await serve(FINGERPRINT)
  t.equal(before.info.fromImage, undefined, 'the code before parses and writes its image')
  t.equal((await serve(FINGERPRINT)).info.fromImage?.ms !== undefined, true, 'and reads it back')

  // The branch: integers rounded down by the serializer; package.json untouched.
  const branch = renderingFingerprint(withSerializerOptions({ rounding: 'floor' }))
  const after = await serve(branch)
  t.equal(after.info.fromImage, undefined, 'the branch parses: the old image\'s bytes are never served')
  t.match(logged, [/^a version image was refused and removed: the snapshot is parsed instead: made by code that renders otherwise \(fingerprint [\w-]+, explore-replica [^)]+\); this code's is [\w-]+$/])
  t.same(await readdir(imagesDir), [`${after.info.version}.image`], 'the old image removed, the branch\'s own written')
  t.equal((await serve(branch)).info.fromImage?.ms !== undefined, true, 'which the branch reads back')
})
