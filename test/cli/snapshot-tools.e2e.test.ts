// The command line (`explore-replica`, src/cli/main.ts) over real files, as child processes: its subcommands
// and their help, the snapshot checker and the converter.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { BUILT_CLI, childEnv, makeItem, smallSnapshot, tempDir, toJsonLines, writeSnapshot } from '../helpers.js'

function run (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [BUILT_CLI, ...args], { env: childEnv() }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })
}

t.test('the snapshot checker: every problem, exit 1; a valid file, exit 0', async t => {
  const check = async (...files: string[]) => {
    const { code, stdout } = await run('check', ...files)
    return { code, stdout }
  }
  const good = await writeSnapshot(t, smallSnapshot())
  t.same(await check(good), { code: 0, stdout: `${good}: valid (en: 25, es: 2, fr: 0 items; generated_at 2026-11-20T09:30:00Z)\n` })
  const item = JSON.stringify(makeItem(1, '2024-01-01', []))
  const bad = await writeSnapshot(t, `{"languages": {"en": [\n  {"pk": 2},\n  ${item},\n  ${item}\n]}}`, 'bad.json')
  const result = await check(good, bad)
  t.equal(result.code, 1)
  t.match(result.stdout, `snapshot ${bad} is invalid (17 problems):\n  bad.json:2:3: languages.en[0].is_translated: is required`)
  t.match(result.stdout, '  bad.json:4:3: languages.en[2].pk: 1 repeats languages.en[1]\n', 'schema problems and repeated pks in one report, each with its place')
  t.equal((await check()).code, 2, 'no file: usage, exit 2')
  const lines = join(await tempDir(t), 'snapshot.jsonl')
  await writeFile(lines, toJsonLines(smallSnapshot()))
  t.same(await check(lines), { code: 0, stdout: `${lines}: valid (en: 25, es: 2, fr: 0 items; generated_at 2026-11-20T09:30:00Z)\n` }, 'JSON Lines too')
  await writeFile(lines, `${toJsonLines(smallSnapshot())}{"language": "en", "pk": 3}\n`)
  t.match((await check(lines)).stdout, 'snapshot.jsonl:29: is_translated: is required')
  // Nested 200,000 deep: one line, with its place (it was a stack overflow).
  const deep = await writeSnapshot(t, `{"languages": {"en": [${'['.repeat(200_000)}${']'.repeat(200_000)}]}}`, 'deep.json')
  t.same(await check(deep), { code: 1, stdout: `snapshot ${deep} is invalid (1 problem):\n  deep.json:1:87: not a snapshot document: a value nested deeper than 64 levels\n` })
})

t.test('convert: JSON to JSON Lines and back, every field kept, the same pages served', async t => {
  const dir = await tempDir(t)
  const doc = smallSnapshot()
  ;(doc.languages.en as object[])[0] = makeItem(1, '2024-01-01', [8], { extra: { kept: true } })
  const json = await writeSnapshot(t, doc)
  const lines = join(dir, 'snapshot.jsonl')
  const back = join(dir, 'back.json')
  const toLines = await run('convert', json, lines)
  t.equal(toLines.code, 0, toLines.stderr)
  t.match(toLines.stdout, /^Wrote .*snapshot\.jsonl \(en: 25, es: 2, fr: 0 items\) in [\d.]+ s\n$/)
  t.same((await readFile(lines, 'utf8')).split('\n')[0], JSON.stringify({ snapshot: 'explore', version: 1, generated_at: '2026-11-20T09:30:00Z', languages: ['en', 'es', 'fr'] }))
  t.equal((await run('convert', lines, back)).code, 0)
  t.same(JSON.parse(await readFile(back, 'utf8')), doc, 'the round trip gives the document back, extras and companies included')
  const [a, b] = [await loadSnapshotFile(json), await loadSnapshotFile(lines)]
  for (const code of a.languages) t.equal(b.language(code)!.page([8], 0, 100).items.toString(), a.language(code)!.page([8], 0, 100).items.toString(), code)
})

t.test('convert: a bad input is reported and nothing is written; same formats are refused', async t => {
  const dir = await tempDir(t)
  const bad = await writeSnapshot(t, { languages: { en: [{ pk: 1 }] } }, 'bad.json')
  const out = join(dir, 'out.jsonl')
  await writeFile(out, 'left alone')
  const result = await run('convert', bad, out)
  t.equal(result.code, 1)
  t.match(result.stderr, `snapshot ${bad} is invalid`)
  t.equal(await readFile(out, 'utf8'), 'left alone')
  t.match((await run('convert', bad, join(dir, 'x.json'))).stderr, /both JSON: nothing to convert/)
  t.equal((await run('convert')).code, 2, 'no files: usage, exit 2')
  t.match((await run('convert', '--help')).stdout, /^Usage: explore-replica convert/)
})

t.test('convert: an item whose own `language` field would move it to another language is refused', async t => {
  const dir = await tempDir(t)
  const json = await writeSnapshot(t, { languages: { 'pt-br': [makeItem(1, '2024-01-01', [], { language: 'en' })], en: [makeItem(2, '2024-01-01', [])] } })
  const out = join(dir, 'out.jsonl')
  const result = await run('convert', json, out)
  t.equal(result.code, 1)
  t.match(result.stderr, 'languages.pt-br[0] has a field "language" ("en"), which JSON Lines reads as the item\'s language: rename it first')
  await t.rejects(readFile(out), { code: 'ENOENT' }, 'nothing written')
})
