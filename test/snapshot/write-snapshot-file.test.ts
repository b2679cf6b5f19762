// The one snapshot writer (generator, converter, capture): the same bytes for the same items in every
// format, and a target left as it was when the check fails or the writing is aborted.
import t from 'tap'
import { readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateSnapshot, writeSnapshot } from '../../src/generate/write-snapshot.js'
import { writeSnapshotFile, type SnapshotFormat } from '../../src/snapshot/write-snapshot-file.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { tempDir } from '../helpers.js'

const OPTIONS = { seed: 5, languages: { en: 30, 'pt-br': 4, fr: 0 }, companies: 6 }

t.test('the same bytes as the generator writes, in each format', async t => {
  const dir = await tempDir(t)
  const doc = generateSnapshot(OPTIONS)
  for (const [format, name] of [['pretty', 'a.json'], ['compact', 'b.json'], ['jsonl', 'c.jsonl']] as Array<[SnapshotFormat, string]>) {
    const generated = join(dir, `generated-${name}`)
    await writeSnapshot(generated, { ...OPTIONS, format })
    const written = await writeSnapshotFile(join(dir, name), {
      generatedAt: doc.generated_at ?? null,
      languages: Object.keys(doc.languages),
      items: async (code, each) => { for (const item of doc.languages[code] ?? []) await each(item) }
    }, { format, check: async file => { await loadSnapshotFile(file) } })
    t.equal(written.bytes, (await readFile(generated)).length, format)
    t.equal(await readFile(join(dir, name), 'utf8'), await readFile(generated, 'utf8'), format)
  }
  if (process.platform !== 'win32') {
    const real = join(dir, 'real.jsonl')
    await writeFile(real, 'old')
    await symlink(real, join(dir, 'link.jsonl'))
    const written = await writeSnapshotFile(join(dir, 'link.jsonl'), { generatedAt: null, languages: ['en'], items: async () => {} }, { format: 'jsonl' })
    t.equal(written.path, real, 'a symbolic link is followed: the link stays, its file is replaced')
    t.equal(await readFile(real, 'utf8'), '{"snapshot":"explore","version":1,"languages":["en"]}\n', 'no generated_at when there is none')
  }
})

t.test('a failed check or an abort: the target keeps its bytes and the temporary file is gone', async t => {
  const dir = await tempDir(t)
  const out = join(dir, 'snapshot.json')
  await writeFile(out, 'old bytes')
  const doc = generateSnapshot(OPTIONS)
  const content = { generatedAt: null, languages: ['en'], items: async (_code: string, each: (item: object) => Promise<void>) => { for (const item of doc.languages.en!) await each(item) } }
  let checked = ''
  await t.rejects(writeSnapshotFile(out, content, {
    format: 'compact',
    check: async file => {
      checked = file
      throw new Error('refused')
    }
  }), { message: 'refused' })
  t.match(checked, /\/\.snapshot\.\d+\.tmp\.json$/, 'the temporary file keeps the extension, so it loads as the target will')
  t.same(await readdir(dir), ['snapshot.json'])
  t.equal(await readFile(out, 'utf8'), 'old bytes')

  const controller = new AbortController()
  const reason = new Error('interrupted')
  const abortMidway = async (_code: string, each: (item: object) => Promise<void>): Promise<void> => {
    for (const [i, item] of doc.languages.en!.entries()) {
      if (i === 10) controller.abort(reason)
      await each(item)
    }
  }
  await t.rejects(writeSnapshotFile(out, { ...content, items: abortMidway }, { format: 'jsonl', signal: controller.signal }), reason)
  t.same(await readdir(dir), ['snapshot.json'])
  t.equal(await readFile(out, 'utf8'), 'old bytes')
  await t.rejects(writeSnapshotFile(join(dir, 'x.jsonl'), { generatedAt: null, languages: ['en'], items: async (_code, each) => { await each({ language: 'fr' }) } }, { format: 'jsonl' }),
    { message: 'an item of en has a field "language" ("fr"), which JSON Lines reads as the item\'s language' })
  t.same(await readdir(dir), ['snapshot.json'])
})
