// An image says what made its bytes (src/snapshot/images/image-fingerprint.ts, ADR 042): code that renders items
// otherwise, with the release string unchanged (a branch, a contributor's edit), never serves an old image's bytes.
import t from 'tap'
import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import fastJson from 'fast-json-stringify'
import { Type } from '@sinclair/typebox'
import { ContentItemSchema } from '../../../src/schemas/content-item.js'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { forSerializer } from '../../../src/schemas/serializer-schema.js'
import {
  currentRendering, FINGERPRINT, LOADED, renderingFingerprint, type Rendering
} from '../../../src/snapshot/images/image-fingerprint.js'
import { ImageShelf } from '../../../src/snapshot/images/image-shelf.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import { PART_KINDS } from '../../../src/snapshot/model/version-arrays.js'
import { SnapshotStore } from '../../../src/snapshot/store/snapshot-store.js'
import { smallSnapshot, tempDir } from '../../helpers.js'

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
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
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
