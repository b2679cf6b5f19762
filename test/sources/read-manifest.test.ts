import t from 'tap'
import { manifestText, parseManifest } from '../../src/sources/read-manifest.js'
import { ManifestError } from '../../src/errors.js'

const problemsOf = (text: string): readonly string[] => {
  try {
    parseManifest(text)
  } catch (error) {
    if (error instanceof ManifestError) return error.problems
    throw error
  }
  throw new Error('the manifest was accepted')
}

t.test('a manifest names a snapshot and its changes beside it; extra fields are kept', async t => {
  const text = '{"manifest": "explore", "version": 1, "snapshot": "snap-2026-11-24.jsonl", "changes": ["chg-0001.jsonl", "chg-0002.jsonl"], "note": "x"}'
  t.same(parseManifest(text), { manifest: 'explore', version: 1, snapshot: 'snap-2026-11-24.jsonl', changes: ['chg-0001.jsonl', 'chg-0002.jsonl'], note: 'x' })
  t.same(parseManifest(manifestText(parseManifest(text))), parseManifest(text), 'what the publisher writes reads back the same')
  t.match(manifestText({ manifest: 'explore', version: 1, snapshot: 's.json', changes: [] }), /^\{\n {2}"manifest": "explore",\n/)
})

t.test('an image described otherwise (an older publisher\'s, one missing what a replica trusts it by) is left out, never a refusal of the manifest', async t => {
  const base = { manifest: 'explore', version: 1, snapshot: 's.jsonl', changes: [] }
  const image = { name: 'a1b2.image', format: 2, by: '0.1.0', fingerprint: 'Ab_1-', snapshot: 'nzJERCv3ouXPuS5koBP-MahCJWI', digest: 'a'.repeat(64), bytes: 1024, later: 'kept' }
  t.same(parseManifest(JSON.stringify({ ...base, image })), { ...base, image }, 'one a replica may read is kept, with fields it does not know')
  const { fingerprint: _f, snapshot: _s, digest: _d, bytes: _b, ...older } = image
  for (const other of [older, { ...image, fingerprint: 'a b' }, { ...image, digest: 'A'.repeat(64) }, { ...image, bytes: -1 }, { ...image, snapshot: '../x' },
    { url: 'https://x.example/a.image', format: 1, by: '0.1.0' }, { ...image, by: 'x'.repeat(101) }, { ...image, name: 'a1b2.bin' }, 'a1b2.image']) {
    t.same(parseManifest(JSON.stringify({ ...base, image: other })), base, JSON.stringify(other).slice(0, 60))
  }
})

t.test('a bad manifest is refused with every reason', async t => {
  t.match(problemsOf('{"manifest": "explore", '), [/^not JSON/])
  t.same(problemsOf('["snap.jsonl"]'), ['not a manifest: expected a JSON object'])
  t.same(problemsOf('{"snapshot": "snap.jsonl"}'), ['manifest: is required', 'version: is required', 'changes: is required'])
  t.same(problemsOf('{"manifest": "explore", "version": 2, "snapshot": "snap.jsonl", "changes": "chg-0001.jsonl"}'), [
    'version: 2 is not 1',
    'changes: expected an array, got "chg-0001.jsonl"'
  ])
})

t.test('a name that leaves the manifest\'s folder is refused: no "..", no folders, no absolute path or URL', async t => {
  const manifest = (snapshot: string, changes: string[] = []) => JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes })
  for (const name of ['../snap.jsonl', '/etc/snap.jsonl', 'https://elsewhere.example/snap.jsonl', 'sub/snap.jsonl', '..\\snap.jsonl', '.hidden.jsonl']) {
    t.same(problemsOf(manifest(name)), [`snapshot: ${JSON.stringify(name)} is not a name beside the manifest (no folders, no "..", no URLs)`], name)
  }
  t.same(problemsOf(manifest('snap.jsonl', ['chg-0001.jsonl', '../../chg-0002.jsonl', 's3://other/chg.jsonl'])), [
    'changes[1]: "../../chg-0002.jsonl" is not a name beside the manifest (no folders, no "..", no URLs)',
    'changes[2]: "s3://other/chg.jsonl" is not a name beside the manifest (no folders, no "..", no URLs)'
  ])
  t.same(problemsOf(manifest('snap.txt', ['chg-0001.json'])), [
    'snapshot: "snap.txt" is not a snapshot\'s name (letters, digits, ., _, -, ending in .json, .jsonl or .ndjson)',
    'changes[0]: "chg-0001.json" is not a change file\'s name (letters, digits, ., _, -, ending in .jsonl)'
  ])
  t.same(problemsOf(manifest('snap.jsonl', ['chg-0001.jsonl', 'chg-0001.jsonl'])), ['changes: a change file is listed twice'])
})

t.test('a name longer than 200 characters is refused: a replica keeps each object as a file, under a longer temporary name first', async t => {
  const manifest = (snapshot: string, changes: string[] = []) => JSON.stringify({ manifest: 'explore', version: 1, snapshot, changes })
  const long = (length: number, extension: string) => `${'a'.repeat(length - extension.length)}${extension}`
  t.same(problemsOf(manifest(long(201, '.jsonl'), ['chg-0001.jsonl', long(300, '.jsonl')])), [
    `snapshot: "${'a'.repeat(56)}... is 201 characters long; at most 200`,
    `changes[1]: "${'a'.repeat(56)}... is 300 characters long; at most 200`
  ])
  t.same(parseManifest(manifest(long(200, '.json'), [long(200, '.jsonl')])).snapshot.length, 200, '200 is still a name')
})
