// STATE_DIR on a real disk: kept versions as hard links for downloads, checked copies for an editor's file, a copy
// where a link cannot cross devices, pruning beyond KEEP_VERSIONS that never takes the served one, and what a restart
// finds; and the default layout's states, the replica's own marked used, others unused for the days given removed.
import t, { type Test } from 'tap'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileStamp } from '../../../src/snapshot/store/serve-chain.js'
import { KeptVersions, type ServedVersion } from '../../../src/snapshot/versions/kept-versions.js'
import { claimState, pruneStates } from '../../../src/snapshot/versions/prune-states.js'
import { tempDir } from '../../helpers.js'

// src/snapshot/versions/kept-versions.ts: a state's versions, kept, pruned and read back at a start.
const SILENT = { info () {}, warn () {}, error () {} }

/** A file whose name says its format, and what a load would say of it. */
async function served (dir: string, name: string, text: string): Promise<ServedVersion> {
  const file = join(dir, name)
  await writeFile(file, text)
  return { file, version: createHash('sha1').update(text).digest('base64url'), generatedAt: null, items: { en: text.length }, source: `https://example.test/${name}` }
}

/** A KeptVersions of `keep` over an empty STATE_DIR/versions of its own, opened as at a start. */
async function openKept (t: Test, keep: number): Promise<{ dir: string, versionsDir: string, kept: KeptVersions }> {
  const dir = await tempDir(t)
  const versionsDir = join(dir, 'versions')
  const kept = new KeptVersions({ dir: versionsDir, keep, log: SILENT })
  await kept.open({ sweep: true })
  return { dir, versionsDir, kept }
}

t.test('a download is kept as a hard link; an editor\'s file as a copy that a save in place does not reach', async t => {
  const dir = await tempDir(t)
  const kept = new KeptVersions({ dir: join(dir, 'versions'), keep: 3, log: SILENT })
  await kept.open({ sweep: true })
  const download = await served(dir, 'download.jsonl', 'one\n')
  const record = await kept.keep(download, { owned: true })
  t.same(record?.chain, { snapshot: 'snapshot.jsonl', changes: [] }, 'a chain: the snapshot, no change files yet')
  t.equal((await stat(kept.chainOf(record!).snapshot)).ino, (await stat(download.file)).ino, 'the same file: a hard link')
  t.same(JSON.parse(await readFile(join(dir, 'versions', download.version, 'version.json'), 'utf8')), record, 'the record beside the files')

  const edited = await served(dir, 'snapshot.json', '{"two": 2}')
  const copy = await kept.keep(edited, { owned: false })
  t.not((await stat(kept.chainOf(copy!).snapshot)).ino, (await stat(edited.file)).ino, 'a file of its own')
  await writeFile(edited.file, '{"saved": "in place"}')
  t.equal(await readFile(kept.chainOf(copy!).snapshot, 'utf8'), '{"two": 2}', 'the kept version is the one served')
  t.same(kept.list().map(r => r.version), [edited.version, download.version], 'newest first')
})

t.test('a file that changed between its load and its copy is not kept under the loaded version', async t => {
  const dir = await tempDir(t)
  const kept = new KeptVersions({ dir: join(dir, 'versions'), keep: 3, log: SILENT })
  await kept.open({ sweep: true })
  const loaded = await served(dir, 'snapshot.json', '{"loaded": 1}')
  await writeFile(loaded.file, '{"saved": "after the load"}')
  t.equal(await kept.keep(loaded, { owned: false }), null)
  t.same(kept.list(), [])
  t.same(await readdir(join(dir, 'versions')), [], 'nothing half-made left')
})

t.test('with the stamp the load read the file at, a copy is checked by a stat of the file, not by reading the copy again', async t => {
  const dir = await tempDir(t)
  const kept = new KeptVersions({ dir: join(dir, 'versions'), keep: 3, log: SILENT })
  await kept.open({ sweep: true })
  const unchanged = await served(dir, 'a.json', '{"a": 1}')
  const record = await kept.keep({ ...unchanged, stamp: await fileStamp(unchanged.file) }, { owned: false })
  t.equal(await readFile(kept.chainOf(record!).snapshot, 'utf8'), '{"a": 1}', 'kept: the file is as the load read it')
  const saved = await served(dir, 'b.json', '{"b": 1}')
  const stamp = await fileStamp(saved.file)
  await writeFile(saved.file, '{"b": 2}')
  t.equal(await kept.keep({ ...saved, stamp }, { owned: false }), null, 'saved again since the load: not kept under the loaded version')
  t.same(kept.list().map(r => r.version), [unchanged.version])
})

t.test('across devices a link is not possible: the file is copied', { skip: (await stat('/dev/shm').catch(() => null))?.dev === (await stat(process.cwd())).dev ? '/dev/shm is on the same device here' : false }, async t => {
  const here = await tempDir(t)
  const there = await mkdtemp('/dev/shm/explore-kept-')
  t.teardown(() => rm(there, { recursive: true, force: true }))
  const kept = new KeptVersions({ dir: join(there, 'versions'), keep: 3, log: SILENT })
  await kept.open({ sweep: true })
  const download = await served(here, 'download.json', '{"far": true}')
  const record = await kept.keep(download, { owned: true })
  t.not((await stat(kept.chainOf(record!).snapshot)).dev, (await stat(download.file)).dev, 'another device')
  t.equal(await readFile(kept.chainOf(record!).snapshot, 'utf8'), '{"far": true}', 'copied')
})

t.test('beyond KEEP_VERSIONS the oldest go, never the served one; a restart finds what is kept', async t => {
  const { dir, versionsDir, kept } = await openKept(t, 2)
  const [a, b, c] = [await served(dir, 'a.json', 'a'), await served(dir, 'b.json', 'b'), await served(dir, 'c.json', 'c')]
  await kept.keep(a, { owned: true })
  await kept.keep(b, { owned: true })
  t.same(kept.list().map(r => r.version), [b.version, a.version])
  // Pinned to a, the oldest: a newer version kept meanwhile does not take it away.
  await kept.prune(a.version)
  await kept.keep(c, { owned: true })
  t.same(kept.list().map(r => r.version), [c.version, b.version], 'the oldest beyond 2 went')
  await kept.prune(a.version)
  t.same((await readdir(versionsDir)).sort(), [b.version, c.version].sort())
  t.equal((await kept.keep(b, { owned: true }))?.version, b.version, 'a version kept twice is kept once')

  // A process that died while keeping left a half-made version; a live one's is left alone.
  await mkdir(join(versionsDir, '.keeping-999999999-1'))
  await mkdir(join(versionsDir, `.keeping-${process.pid}-99`))
  const again = new KeptVersions({ dir: versionsDir, keep: 2, log: SILENT })
  await again.open({ sweep: true })
  t.same(again.list(), kept.list(), 'the records read back')
  t.notOk(existsSync(join(versionsDir, '.keeping-999999999-1')), 'a dead process\'s half-made version is removed')
  t.ok(existsSync(join(versionsDir, `.keeping-${process.pid}-99`)), 'a live one\'s is not')
})

t.test('a version built by change files links the change files an earlier kept version holds, and copies only the new one', async t => {
  const dir = await tempDir(t)
  const kept = new KeptVersions({ dir: join(dir, 'versions'), keep: 5, log: SILENT })
  await kept.open({ sweep: true })
  const snapshot = await served(dir, 'snapshot.json', '{"s": 1}')
  const change = async (id: string) => {
    const file = join(dir, `${id}.jsonl`)
    const text = `{"changes": "explore", "version": 1, "id": "${id}"}\n`
    await writeFile(file, text)
    return { file, digest: createHash('sha1').update(text).digest('base64url'), stamp: await fileStamp(file) }
  }
  const a = await change('a')
  const b = await change('b')
  const first = await kept.keep({ ...snapshot, version: `${snapshot.version}+a`, changes: [a] }, { owned: false })
  const second = await kept.keep({ ...snapshot, version: `${snapshot.version}+b`, changes: [a, b] }, { owned: false })
  const [firstA] = kept.chainOf(first!).changes
  const [secondA, secondB] = kept.chainOf(second!).changes
  t.not((await stat(firstA!)).ino, (await stat(a.file)).ino, 'an editor\'s change file is copied the first time')
  t.equal((await stat(secondA!)).ino, (await stat(firstA!)).ino, 'then linked from the kept copy')
  t.not((await stat(secondB!)).ino, (await stat(b.file)).ino, 'the new one copied')
  t.equal(await readFile(secondB!, 'utf8'), await readFile(b.file, 'utf8'))
  t.same(second!.changeDigests, [a.digest, b.digest])
})

t.test('a record that is not a kept version\'s (not JSON, other fields, another directory\'s, files outside) is skipped with a warning, and nothing outside is touched', async t => {
  const { dir, versionsDir, kept } = await openKept(t, 1)
  const good = await served(dir, 'good.jsonl', 'good\n')
  const record = await kept.keep(good, { owned: true })
  const outside = join(dir, 'precious.jsonl')
  await writeFile(outside, 'not the replica\'s\n')

  const bad: Record<string, string> = {
    truncated: JSON.stringify(record).slice(0, 20),
    null: 'null',
    array: '[]',
    empty: '{}',
    'served-at-a-number': JSON.stringify({ ...record, version: 'served-at-a-number', servedAt: 1 }),
    'another-directory': JSON.stringify({ ...record, version: 'elsewhere' }),
    // Newest of all, and beyond KEEP_VERSIONS: were it read, the prune below would remove '..' and a rollback read the file.
    'parent-dir': JSON.stringify({ ...record, version: '..', servedAt: '2999-01-01T00:00:00.000Z' }),
    'snapshot-outside': JSON.stringify({ ...record, version: 'snapshot-outside', servedAt: '2999-01-01T00:00:00.000Z', chain: { snapshot: '../../precious.jsonl', changes: [] } }),
    'change-outside': JSON.stringify({ ...record, version: 'change-outside', chain: { snapshot: 'snapshot.jsonl', changes: ['/etc/hostname'] } })
  }
  for (const [name, text] of Object.entries(bad)) {
    await mkdir(join(versionsDir, name))
    await writeFile(join(versionsDir, name, 'version.json'), text)
  }
  const warned: string[] = []
  const again = new KeptVersions({ dir: versionsDir, keep: 1, log: { ...SILENT, warn (fields: { version?: string }) { warned.push(String(fields.version)) } } })
  await again.open({ sweep: true })
  t.same(again.list(), [record], 'only the good record is read')
  t.same(warned.sort(), Object.keys(bad).sort(), 'each of the others is named in a warning')
  await again.prune(good.version)
  t.equal(await readFile(outside, 'utf8'), 'not the replica\'s\n', 'a file outside the versions is untouched')
  t.ok(existsSync(join(dir, 'good.jsonl')), 'and so is the directory above')
})

t.test('a version of the same name with other change files (one edited after it was applied) replaces the one kept under that name', async t => {
  const { dir, versionsDir, kept } = await openKept(t, 5)
  const snapshot = await served(dir, 'snapshot.json', '{"s": 1}')
  const file = join(dir, 'x.jsonl')
  const change = async (text: string) => {
    await writeFile(file, text)
    return { file, digest: createHash('sha1').update(text).digest('base64url'), stamp: await fileStamp(file) }
  }
  const version = `${snapshot.version}+x`
  const first = await change('{"changes": "explore", "version": 1, "id": "x"}\n"title A"\n')
  await kept.keep({ ...snapshot, version, changes: [first] }, { owned: false })
  t.equal((await kept.keep({ ...snapshot, version, changes: [first] }, { owned: false }))?.changeDigests?.[0], first.digest, 'the same content: kept once')
  const edited = await change('{"changes": "explore", "version": 1, "id": "x"}\n"title B, edited"\n')
  const record = await kept.keep({ ...snapshot, version, changes: [edited] }, { owned: false })
  t.same(record?.changeDigests, [edited.digest])
  t.equal(await readFile(kept.chainOf(kept.get(version)!).changes[0]!, 'utf8'), '{"changes": "explore", "version": 1, "id": "x"}\n"title B, edited"\n', 'going back to the name serves what was served under it last')
  t.same(kept.list().map(r => r.version), [version], 'one record of the name')
  t.same((await readdir(versionsDir)).filter(name => name.startsWith('.')), [], 'nothing left aside')
  const again = new KeptVersions({ dir: versionsDir, keep: 5, log: SILENT })
  await again.open({ sweep: true })
  t.same(again.list(), kept.list(), 'and a restart reads the same')
})

t.test('a directory under the name whose record does not read is replaced by a keep, not taken for it; a dead process\'s whole version moved aside is put back in place at a start', async t => {
  const { dir, versionsDir, kept } = await openKept(t, 5)
  const one = await served(dir, 'one.jsonl', 'one\n')
  await mkdir(join(versionsDir, one.version))
  await writeFile(join(versionsDir, one.version, 'version.json'), '{"cut short')
  const record = await kept.keep(one, { owned: false })
  t.same(JSON.parse(await readFile(join(versionsDir, one.version, 'version.json'), 'utf8')), record, 'the new record in place')
  t.equal(await readFile(kept.chainOf(record!).snapshot, 'utf8'), 'one\n', 'with its file')

  // A process that died between moving its version aside and renaming the new one in.
  await rename(join(versionsDir, one.version), join(versionsDir, '.keeping-999999999-7'))
  const again = new KeptVersions({ dir: versionsDir, keep: 5, log: SILENT })
  await again.open({ sweep: true })
  t.same(again.list(), [record], 'read back under its name')
  t.equal(await readFile(again.chainOf(record!).snapshot, 'utf8'), 'one\n')
  t.same((await readdir(versionsDir)).filter(name => name.startsWith('.')), [], 'nothing left aside')
})

t.test('an older build\'s record naming a signed URL is read back with its query as ?…: /-/versions never shows it', async t => {
  const { dir, versionsDir, kept } = await openKept(t, 2)
  const a = await served(dir, 'a.json', 'a')
  await kept.keep({ ...a, source: 'https://example.test/a.json' }, { owned: true })
  // As a build that kept the whole URL wrote it.
  const file = join(versionsDir, a.version, 'version.json')
  const record = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, JSON.stringify({ ...record, source: 'https://reader:pw@example.test/a.json?sig=S3cr3t' }))
  const again = new KeptVersions({ dir: versionsDir, keep: 2, log: SILENT })
  await again.open({ sweep: true })
  t.same(again.list().map(r => r.source), ['https://example.test/a.json?…'])
})

// src/snapshot/versions/prune-states.ts: the default layout's states, the replica's own marked used, others unused removed.
const DAY = 24 * 60 * 60 * 1000

async function state (dir: string, name: string, daysAgo: number): Promise<string> {
  const path = join(dir, name)
  await mkdir(join(path, 'v1'), { recursive: true })
  await writeFile(join(path, 'v1', 'snapshot.json'), 'x'.repeat(1000))
  const then = new Date(Date.now() - daysAgo * DAY)
  await utimes(path, then, then)
  return path
}

t.test('states of the default layout unused for the days given are removed, each said; the rest stay', async t => {
  const dir = await tempDir(t)
  const own = await state(dir, 'state-aaaaaaaaaaaa', 90)
  await state(dir, 'state-bbbbbbbbbbbb', 31)
  await state(dir, 'state-cccccccccccc', 29)
  // In use by a live process (this one) for longer than that: never removed.
  const running = await state(dir, 'state-eeeeeeeeeeee', 0)
  await writeFile(join(running, `.in-use-${process.pid}`), '')
  const then = new Date(Date.now() - 90 * DAY)
  await utimes(running, then, then)
  await state(dir, 'state', 90) // a STATE_DIR of its own: not the default layout's
  await writeFile(join(dir, 'snapshot-dddddddddddd.json'), '{}')
  const said: Array<[object, string]> = []
  const log = { info: (fields: object, message: string) => { said.push([fields, message]) }, warn () {}, error () {} }
  const letGo = await claimState(own, false, () => true)
  await pruneStates(own, 30, log)
  t.same((await readdir(dir)).sort(), ['snapshot-dddddddddddd.json', 'state', 'state-aaaaaaaaaaaa', 'state-cccccccccccc', 'state-eeeeeeeeeeee'])
  t.same(said, [[{ state: join(dir, 'state-bbbbbbbbbbbb'), unusedDays: 31, bytes: 1000 }, 'removed a state not used for STATE_PRUNE_DAYS']])
  t.ok(Date.now() - (await stat(own)).mtimeMs < DAY, 'its own state marked used now')
  t.ok((await readdir(own)).includes(`.in-use-${process.pid}`), 'and in use by this process')
  letGo()
  t.same(await readdir(own), ['v1'], 'let go: the mark goes, the state stays')
})

t.test('a state a start made goes whole when nothing was ever served', async t => {
  const dir = await tempDir(t)
  const made = join(dir, 'state-ffffffffffff')
  await mkdir(made)
  const letGo = await claimState(made, true, () => false)
  letGo()
  t.same(await readdir(dir), [])
})

t.test('0 days removes nothing; a STATE_DIR outside the default layout prunes nothing', async t => {
  const dir = await tempDir(t)
  const own = await state(dir, 'state-aaaaaaaaaaaa', 0)
  await state(dir, 'state-bbbbbbbbbbbb', 400)
  const log = { info () { t.fail('nothing is said') }, warn () {}, error () {} }
  await claimState(own, false, () => true)
  await pruneStates(own, 0, log)
  await pruneStates(join(dir, 'state'), 30, log)
  t.same((await readdir(dir)).sort(), ['state-aaaaaaaaaaaa', 'state-bbbbbbbbbbbb'])
})
