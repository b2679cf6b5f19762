// Change files read and checked: the header, the ops in file order with their items rendered
// as a snapshot's are, and every broken rule reported with its line before anything could apply.
import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SnapshotError } from '../../../src/errors.js'
import { readChangeFile } from '../../../src/snapshot/changes/read-change-file.js'
import type { ChangeSet } from '../../../src/snapshot/changes/change-set.js'
import { SnapshotLoader } from '../../../src/snapshot/load/load-snapshot.js'
import { renderItem } from '../../../src/snapshot/model/item-bytes.js'
import { ParsePool } from '../../../src/snapshot/load/parse-pool.js'
import { AT } from '../../../src/snapshot/model/version-arrays.js'
import { makeItem, poolForAnySize, tempDir } from '../../helpers.js'

const HEADER = { changes: 'explore', version: 1, id: '2026-11-24-fix-titles', generated_at: '2026-11-24T10:00:00Z' }
const line = (value: unknown): string => `${JSON.stringify(value)}\n`
const upsert = (language: string, pk: number, backdate = '2024-01-01', companies = [7]) => ({ op: 'upsert', language, ...makeItem(pk, backdate, companies) })

async function changeFile (t: Test, text: string, name = 'changes.jsonl'): Promise<string> {
  const file = join(await tempDir(t), name)
  await writeFile(file, text)
  return file
}

async function problemsOf (t: Test, text: string, loader?: SnapshotLoader): Promise<readonly string[]> {
  const file = await changeFile(t, text, '0001.jsonl')
  try {
    await readChangeFile(file, loader === undefined ? {} : { loader })
  } catch (error) {
    if (error instanceof SnapshotError) return error.problems
    throw error
  }
  throw new Error('the change file was accepted')
}

/** Each upsert's bytes as served, each delete as `-language/pk`: what the set says, in order. */
function opsOf (changes: ChangeSet): string[] {
  return changes.ops.map(op => {
    if (op.op === 'delete') return `-${op.language}/${op.pk}@${op.line}`
    const { [AT.chunkOf]: chunk, [AT.startOf]: start, [AT.lengthOf]: length } = op.row as number[]
    return `+${op.language}/${op.pk}@${op.line} ${changes.chunks[chunk!]!.toString('utf8', start, start! + length!)}`
  })
}

const pool = new ParsePool({ threads: 1 })
t.teardown(async () => await pool.close())

const LOADERS: Array<[string, SnapshotLoader | undefined]> = [
  ['the process\'s own pipeline', undefined],
  ['batches of 64 bytes', new SnapshotLoader({ batchBytes: 64 })],
  ['a parse thread', new SnapshotLoader({ pool: poolForAnySize(pool), batchBytes: 200 })]
]

for (const [name, loader] of LOADERS) {
  t.test(`${name}: the header and every op, in file order, each upsert rendered as a snapshot line is`, async t => {
    const text = line(HEADER) + line(upsert('en', 1)) + '\n' + line({ op: 'delete', language: 'es', pk: 812 }) +
      line(upsert('en', 1, '2024-02-02', [8])) + line(upsert('pt-br', 5)) + line({ op: 'delete', language: 'en', pk: 3 })
    const changes = await readChangeFile(await changeFile(t, text), loader === undefined ? {} : { loader })
    t.equal(changes.id, '2026-11-24-fix-titles')
    t.equal(changes.generatedAt, '2026-11-24T10:00:00Z')
    t.match(changes.digest, /^[\w-]{27}$/)
    t.same(opsOf(changes), [
      `+en/1@2 ${renderItem(makeItem(1, '2024-01-01', [7]))}`,
      '-es/812@4',
      `+en/1@5 ${renderItem(makeItem(1, '2024-02-02', [8]))}`,
      `+pt-br/5@6 ${renderItem(makeItem(5, '2024-01-01', [7]))}`,
      '-en/3@7'
    ])
    const second = changes.ops[2]!
    t.same(second.op === 'upsert' && { date: second.row[AT.dateOf], companies: second.companies }, { date: 20240202, companies: [8] })
  })

  t.test(`${name}: every broken rule is reported with its line, and nothing is returned`, async t => {
    const bad = line(HEADER) +
      line(upsert('en', 1)) +
      line({ ...upsert('en', 2), backdate: '2023-02-29' }) +
      line({ op: 'rename', language: 'en', pk: 3 }) +
      line({ op: 'delete', language: 'en' }) +
      line({ language: 'en', pk: 4 }) +
      line({ op: 'delete', language: 'EN', pk: 5 }) +
      '{"op": "delete", "language": "en", "pk": 6'
    const problems = await problemsOf(t, bad, loader)
    // A truncated last line: the syntax error's wording is the runtime's, as for a snapshot's line.
    t.match(problems.at(-1), /^0001\.jsonl:8: not valid JSON: /)
    t.same(problems.slice(0, -1), [
      '0001.jsonl:3:125: backdate: "2023-02-29" is not a calendar date (YYYY-MM-DD)',
      '0001.jsonl:4:7: op: "rename" is not "upsert" or "delete"',
      '0001.jsonl:5: pk: is required',
      '0001.jsonl:6: op: is required ("upsert" or "delete")',
      '0001.jsonl:7:27: language: "EN" does not match ^[a-z]{2}(-[a-z]{2,4})?$'
    ])
  })
}

t.test('a bad change file is reported as a change file, in the log and status as by check', async t => {
  const file = await changeFile(t, line(HEADER) + line({ op: 'upsert', language: 'en' }))
  const error = await readChangeFile(file).then(() => null, (error: unknown) => error)
  t.match(error, { name: 'SnapshotError', kind: 'change file', code: 'SNAPSHOT_ERR_INVALID' })
  t.match((error as Error).message, new RegExp(`^change file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is invalid \\(`))
  const missing = await readChangeFile(join(await tempDir(t), 'gone.jsonl')).then(() => null, (error: unknown) => error)
  t.match((missing as Error).message, /^change file .*gone\.jsonl cannot be read/)
})

t.test('a change file without its header is refused at its first line', async t => {
  t.same(await problemsOf(t, '\n' + line(upsert('en', 1))), [
    '0001.jsonl:2: the header is missing: a change file starts with {"changes": "explore", "version": 1, "id": "…"}'
  ])
  t.same(await problemsOf(t, ''), ['0001.jsonl: the file is empty: a change file starts with {"changes": "explore", "version": 1, "id": "…"}'])
})

for (const [name, loader] of LOADERS) {
  t.test(`${name}: a snapshot given as a change file is told so in one problem, not that every line lacks an op`, async t => {
    const snapshot = line({ snapshot: 'explore', version: 1, languages: ['en'] }) +
      Array.from({ length: 30 }, (_, i) => line({ language: 'en', ...makeItem(i, '2024-01-01', []) })).join('')
    t.same(await problemsOf(t, '\n' + snapshot, loader), [
      '0001.jsonl:2: this is a snapshot (its header says "snapshot"), not a change file: give it as the snapshot, before its change files'
    ])
  })
}

t.test('a wrong header is reported by rule: changes, version, id', async t => {
  t.same(await problemsOf(t, line({ changes: 'other', version: 2, id: 'a b/c' }) + line(upsert('en', 1))), [
    '0001.jsonl:1: changes: "other" is not "explore"',
    '0001.jsonl:1: version: 2 is not 1',
    '0001.jsonl:1: id: "a b/c" does not match ^[A-Za-z0-9._-]+$'
  ])
  t.same(await problemsOf(t, line({ changes: 'explore', version: 1 })), ['0001.jsonl:1: id: is required'])
  t.same(await problemsOf(t, line({ ...HEADER, generated_at: 'yesterday' })), ['0001.jsonl:1: generated_at: "yesterday" is not an ISO-8601 timestamp'])
})

t.test('an id longer than 100 characters is refused on the header\'s line: it ends the version\'s name, which names a kept version\'s directory', async t => {
  const long = 'a'.repeat(101)
  t.same(await problemsOf(t, line({ ...HEADER, id: long }) + line(upsert('en', 1))), [
    `0001.jsonl:1: id: "${'a'.repeat(56)}... is 101 characters long; at most 100`
  ])
  t.same(await problemsOf(t, line({ ...HEADER, id: 'x'.repeat(20_000) })), [
    `0001.jsonl:1: id: "${'x'.repeat(56)}... is 20000 characters long; at most 100`
  ])
  const changes = await readChangeFile(await changeFile(t, line({ ...HEADER, id: 'a'.repeat(100) })))
  t.equal(changes.id.length, 100, '100 is still a name')
})

t.test('a second header (two files joined) is reported on its line', async t => {
  t.same(await problemsOf(t, line(HEADER) + line(upsert('en', 1)) + line(HEADER)), [
    '0001.jsonl:3: op: is required ("upsert" or "delete")'
  ])
})

t.test('a header alone is a valid change that changes nothing; a missing file cannot be read', async t => {
  const changes = await readChangeFile(await changeFile(t, line({ changes: 'explore', version: 1, id: 'noop' })))
  t.same([changes.id, changes.generatedAt, changes.ops], ['noop', null, []])
  const error = await readChangeFile(join(await tempDir(t), 'gone.jsonl')).catch((error: unknown) => error)
  t.ok(error instanceof SnapshotError)
  t.same((error as SnapshotError).problems, ['the file does not exist'])
})
