// `explore-replica check` (src/cli/check-command.ts) in this process: each kind told by its name or first
// line and read by the service's own reader for it (a change file's problems are the store's, line for
// line), one line per valid file, every problem of an invalid one, and the exit codes.
import t from 'tap'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { checkCommand, CHECK_USAGE } from '../../src/cli/check-command.js'
import { IMAGE_FORMAT } from '../../src/snapshot/images/image-fingerprint.js'
import { writeImage } from '../../src/snapshot/images/version-image.js'
import { buildTestApp, makeItem, modelOf, tempDir, toJsonLines, versioned } from '../helpers.js'

async function check (...argv: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await checkCommand(argv, { out: text => { stdout += text }, err: text => { stderr += text } })
  return { code, stdout, stderr }
}

const HEADER = JSON.stringify({ changes: 'explore', version: 1, id: 'chg-0001', generated_at: '2026-11-24T10:00:00Z' })
const upsert = (pk: number, extra: Record<string, unknown> = {}): string => JSON.stringify({ op: 'upsert', language: 'en', ...makeItem(pk, '2024-01-01', [7]), ...extra })
const remove = (pk: number): string => JSON.stringify({ op: 'delete', language: 'en', pk })

t.test('a valid change file: its id, its upserts and deletes, its generated_at', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'chg-0001.jsonl')
  await writeFile(file, `${HEADER}\n${upsert(1)}\n${upsert(2)}\n\n${remove(3)}\n`)
  t.same(await check(file), { code: 0, stdout: `${file}: valid (change file chg-0001: 2 upserts, 1 delete; generated_at 2026-11-24T10:00:00Z)\n`, stderr: '' })
  // Told by its first line whatever comes before it: a byte order mark, blank lines, CRLF line ends.
  const windows = join(dir, 'chg-0002.jsonl')
  await writeFile(windows, `\ufeff\r\n  \r\n${JSON.stringify({ changes: 'explore', version: 1, id: 'chg-0002' })}\r\n${remove(1)}\r\n`)
  t.same(await check(windows), { code: 0, stdout: `${windows}: valid (change file chg-0002: 0 upserts, 1 delete)\n`, stderr: '' })
  // A replica reads change files by no other name than *.jsonl: an .ndjson one would never apply.
  const ndjson = join(dir, 'chg-0003.ndjson')
  await writeFile(ndjson, `${HEADER}\n${remove(1)}\n`)
  t.same(await check(ndjson), { code: 1, stdout: `${ndjson}: a change file, but named otherwise than *.jsonl: a replica reads change files only by that name\n`, stderr: '' })
})

t.test('a bad change file: every problem, with the lines the store reports when it refuses the file', async t => {
  // The service's own report: the store refusing the file from its CHANGES_DIR.
  const changesDir = join(await tempDir(t), 'changes')
  await mkdir(changesDir)
  const file = join(changesDir, 'chg-0001.jsonl')
  await writeFile(file, `${HEADER}\n${upsert(1)}\n\n${upsert(2, { backdate: 'soon' })}\n${JSON.stringify({ op: 'remove', language: 'en', pk: 1 })}\n${remove(1)}\n`)
  const app = await buildTestApp(t, versioned(1), { changesDir })
  const served = app.snapshots.status().lastFailure?.problems
  t.ok(served !== undefined && served.length === 2, 'the store refused it')

  const { code, stdout } = await check(file)
  t.equal(code, 1)
  t.equal(stdout, `change file ${file} is invalid (2 problems):\n${served!.map(problem => `  ${problem}\n`).join('')}`)
  t.match(stdout, '  chg-0001.jsonl:4:125: backdate: "soon" ', 'counted from the header\'s line 1, blank lines included; the column where the value starts')
  t.match(stdout, '  chg-0001.jsonl:5:7: op: "remove" is not "upsert" or "delete"\n')

  // A snapshot's header, or none: the change file's own refusals.
  const noHeader = join(changesDir, 'no-header.jsonl')
  await writeFile(noHeader, `${HEADER.replace('"chg-0001"', '"a b"')}\n${remove(1)}\n`)
  t.same(await check(noHeader), { code: 1, stdout: `change file ${noHeader} is invalid (1 problem):\n  no-header.jsonl:1: id: "a b" does not match ^[A-Za-z0-9._-]+$\n`, stderr: '' })
})

t.test('a manifest: read by the followers\' reader; the files it names are not fetched', async t => {
  const dir = await tempDir(t)
  const manifest = join(dir, 'manifest.json')
  await writeFile(manifest, JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-0001.jsonl', changes: ['chg-0001.jsonl', 'chg-0002.jsonl'] }))
  t.same(await check(manifest), { code: 0, stdout: `${manifest}: valid (manifest: snap-0001.jsonl and 2 change files; those files were not fetched or checked)\n`, stderr: '' }, 'neither file is there: not looked for')
  const fleet = join(dir, 'fleet-manifest.json')
  await writeFile(fleet, JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-0001.json', changes: [] }))
  t.same((await check(fleet)).stdout, `${fleet}: valid (manifest: snap-0001.json and no change files; those files were not fetched or checked)\n`, 'any name that ends in manifest.json')

  const bad = join(dir, 'bad-manifest.json')
  await writeFile(bad, JSON.stringify({ manifest: 'explore', version: 2, snapshot: '../snap-0001.jsonl', changes: ['chg-0001.jsonl', 'chg-0001.jsonl'] }))
  t.same(await check(bad), {
    code: 1,
    stdout: `manifest ${bad} is invalid (3 problems):\n` +
      '  snapshot: "../snap-0001.jsonl" is not a name beside the manifest (no folders, no "..", no URLs)\n' +
      '  changes: a change file is listed twice\n' +
      '  version: 2 is not 1\n',
    stderr: ''
  })
  const notJson = join(dir, 'broken-manifest.json')
  await writeFile(notJson, '{"manifest": "explore",')
  t.match((await check(notJson)).stdout, `manifest ${notJson} is invalid (1 problem):\n  not JSON (`)
  t.same((await check(join(dir, 'gone-manifest.json'))).stdout, `manifest ${join(dir, 'gone-manifest.json')} cannot be read (1 problem):\n  the file does not exist\n`)
})

t.test('several files of every kind: each reported in order; one bad file or one of no known kind, exit 1', async t => {
  const dir = await tempDir(t)
  const snapshot = join(dir, 'snap-0001.jsonl')
  await writeFile(snapshot, toJsonLines(versioned(1)))
  const change = join(dir, 'chg-0001.jsonl')
  await writeFile(change, `${HEADER}\n${upsert(1)}\n`)
  const badChange = join(dir, 'chg-0002.jsonl')
  await writeFile(badChange, `${HEADER}\n{"op": "delete", "language": "en"}\n`)
  const manifest = join(dir, 'manifest.json')
  await writeFile(manifest, JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-0001.jsonl', changes: ['chg-0001.jsonl'] }))
  const notes = join(dir, 'notes.txt')
  await writeFile(notes, HEADER)

  const all = await check(snapshot, change, badChange, manifest, notes)
  t.equal(all.code, 1)
  t.equal(all.stdout, [
    `${snapshot}: valid (en: 21 items; generated_at 2026-01-01T00:00:01Z)`,
    `${change}: valid (change file chg-0001: 1 upsert, 0 deletes; generated_at 2026-11-24T10:00:00Z)`,
    `change file ${badChange} is invalid (1 problem):`,
    '  chg-0002.jsonl:2: pk: is required',
    `${manifest}: valid (manifest: snap-0001.jsonl and 1 change file; those files were not fetched or checked)`,
    `${notes}: not a snapshot, change file or manifest: its name ends in none of .json, .jsonl, .ndjson (snapshots, change files) or manifest.json (a fleet's manifest)`,
    ''
  ].join('\n'))
  t.same(await check(snapshot, change, manifest), { code: 0, stdout: all.stdout.split('\n').filter((_, i) => [0, 1, 4].includes(i)).map(line => `${line}\n`).join(''), stderr: '' }, 'all valid: exit 0')
  t.same(await check(notes), { code: 1, stdout: `${notes}: not a snapshot, change file or manifest: its name ends in none of .json, .jsonl, .ndjson (snapshots, change files) or manifest.json (a fleet's manifest)\n`, stderr: '' }, 'no known kind alone: exit 1')
})

t.test('usage: --help, no file, an unknown option', async t => {
  t.same(await check('--help'), { code: 0, stdout: CHECK_USAGE, stderr: '' })
  t.match(CHECK_USAGE, /manifest\.json .*\n.*not fetched/)
  t.same(await check(), { code: 2, stdout: '', stderr: CHECK_USAGE })
  // Thrown for main.ts, which prints it and exits 2 (main.e2e.test.ts).
  await t.rejects(check('--colour', 'x.jsonl'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' })
})

t.test('a version image: read and checked whole as a replica reads it; a damaged one with its reason', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.image')
  const model = await modelOf(versioned(1))
  await writeImage(file, model, null)
  t.same(await check(file), { code: 0, stdout: `${file}: valid (version image of ${model.info.version}: en: 21 items)\n`, stderr: '' })
  const bytes = await readFile(file)
  bytes.writeUInt32LE(7, 8)
  await writeFile(file, bytes)
  t.same(await check(file), { code: 1, stdout: `version image ${file} is invalid (1 problem):\n  image format 7; this replica reads format ${IMAGE_FORMAT}\n`, stderr: '' })
  t.match((await check(join(dir, 'none.image'))).stdout, /^version image .*none\.image cannot be read/)
})
