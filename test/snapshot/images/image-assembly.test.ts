// An image put together in memory as it downloads (src/snapshot/images/image-assembly.ts, ADR 042): whatever pieces its
// bytes come in, the version a read of the file gives; refused at its header before any array is made, or at its end.
import t from 'tap'
import fc from 'fast-check'
import { open, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ImageError } from '../../../src/errors.js'
import { ImageAssembly } from '../../../src/snapshot/images/image-assembly.js'
import { FINGERPRINT } from '../../../src/snapshot/images/image-fingerprint.js'
import { readImage, readImageHeader, writeImage, type ImageHeader } from '../../../src/snapshot/images/version-image.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { partsOf } from '../../../src/snapshot/model/version-parts.js'
import { makeItem, modelOf, tempDir } from '../../helpers.js'
import { runs } from '../../property-runs.js'

/** Two languages, items of many sizes: every kind of section, and padding between them. */
async function image (t: Parameters<typeof tempDir>[0]): Promise<{ file: string, bytes: Buffer }> {
  const items = (count: number) => Array.from({ length: count }, (_, n) =>
    makeItem(n + 1, `2024-01-${String(1 + (n % 28)).padStart(2, '0')}`, [n % 5], { translated_title: `item ${n} ${'x'.repeat(n * 7 % 200)}` }))
  const model = await modelOf({ languages: { en: items(90), fr: items(30) } })
  const file = join(await tempDir(t), 'snapshot.image')
  await writeImage(file, model, null)
  model.memory.retire()
  return { file, bytes: await readFile(file) }
}

/** Its arrays and numbers, as two equal versions share them. */
function contentOf (model: SnapshotModel): string {
  return JSON.stringify(partsOf(model), (key, value: unknown) => {
    if (key === 'loadedAt' || key === 'source') return undefined
    return ArrayBuffer.isView(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value
  })
}

/** `bytes` fed in pieces cut at `cuts`, each promise waited for; the headers the assembly was admitted with. */
async function assembled (bytes: Buffer, cuts: number[], size = bytes.length): Promise<{ model: SnapshotModel | ImageError, admitted: ImageHeader[] }> {
  const admitted: ImageHeader[] = []
  const assembly = new ImageAssembly(size, FINGERPRINT, async header => { admitted.push(header) })
  try {
    let from = 0
    for (const cut of [...cuts.filter(at => at > 0 && at < bytes.length).sort((a, b) => a - b), bytes.length]) {
      await assembly.feed(bytes.subarray(from, cut))
      from = cut
    }
    return { model: assembly.finish('downloaded.image'), admitted }
  } catch (error) {
    if (error instanceof ImageError) return { model: error, admitted }
    throw error
  }
}

t.test('an image fed in any pieces is the version its file reads as', async t => {
  const { file, bytes } = await image(t)
  const handle = await open(file, 'r')
  const read = await readImage(handle, await readImageHeader(handle), file).finally(() => handle.close())
  const expected = contentOf(read)
  t.equal(contentOf((await assembled(bytes, [])).model as SnapshotModel), expected, 'in one piece')
  t.equal(contentOf((await assembled(bytes, Array.from({ length: bytes.length }, (_, n) => n))).model as SnapshotModel), expected, 'a byte at a time')
  await fc.assert(fc.asyncProperty(fc.array(fc.nat({ max: bytes.length }), { maxLength: 40 }), async cuts => {
    const { model } = await assembled(bytes, cuts)
    return !(model instanceof ImageError) && contentOf(model) === expected
  }), { numRuns: runs(200) })
})

t.test('refused at its header, before its memory is asked for; refused at its end when short or long', async t => {
  const { bytes } = await image(t)
  const otherFormat = Buffer.from(bytes)
  otherFormat.writeUInt32LE(99, 8)
  t.match(await assembled(otherFormat, [10, 30]), { model: { message: /^image format 99; this replica reads format / }, admitted: [] })
  const damagedHeader = Buffer.from(bytes)
  damagedHeader.writeUInt8(damagedHeader.readUInt8(30) ^ 1, 30)
  t.match(await assembled(damagedHeader, [100]), { model: { message: 'its header\'s checksum does not match' }, admitted: [] })
  const other = new ImageAssembly(bytes.length, 'renders-otherwise', async () => { t.fail('not admitted') })
  t.throws(() => other.feed(bytes), { message: /^made by code that renders otherwise/ })
  t.match(await assembled(bytes.subarray(0, bytes.length - 8), [], bytes.length), { model: { message: `it ends at ${bytes.length - 8} of the ${bytes.length} bytes its manifest says` } })
  t.match(await assembled(bytes, [], bytes.length - 1), { model: { message: 'it is longer than its manifest says' } })
  const refused = new ImageAssembly(bytes.length, FINGERPRINT, async () => { throw new ImageError('not this snapshot') })
  await t.rejects(async () => { await refused.feed(bytes) }, { message: 'not this snapshot' }, 'the caller\'s refusal at its header')
})

t.test('an image whose parts lie is refused when it is finished, as a read of its file refuses it', async t => {
  const { file, bytes } = await image(t)
  const handle = await open(file, 'r')
  const header = await readImageHeader(handle).finally(() => handle.close())
  // An item's start moved past its chunk: the parts' check refuses it.
  const startOf = (header.parts.listings[0] as unknown as { startOf: { section: number } }).startOf.section
  const moved = Buffer.from(bytes)
  moved.writeUInt32LE(0xffff_fff0, header.sections[startOf]!.offset)
  t.match((await assembled(moved, [])).model, { message: /^its parts do not describe a version: \w+: item 0 lies outside its chunk$/ })
})
