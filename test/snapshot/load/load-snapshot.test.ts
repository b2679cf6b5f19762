// The one load pipeline, as production runs it: format v1 files on disk, the parse pool for large ones, every problem
// reported with its line and column, its JSON path and its rule; and the order its merge takes parsed batches in.
import t from 'tap'
import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { BatchMemory } from '../../../src/snapshot/load/batch-memory.js'
import { SnapshotLoader, loadSnapshotFile } from '../../../src/snapshot/load/load-snapshot.js'
import { MergeQueue } from '../../../src/snapshot/load/merge-batches.js'
import type { ParsedBatch } from '../../../src/snapshot/load/parse-batch.js'
import { ParsePool } from '../../../src/snapshot/load/parse-pool.js'
import { ValidationReport } from '../../../src/snapshot/load/validation-report.js'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { makeItem, modelOf, poolForAnySize, positionOf, problemsOf, smallSnapshot, tempDir, withoutPlace, writeSnapshot } from '../../helpers.js'

// src/snapshot/load/load-snapshot.ts: format v1 through the pipeline, its problems with their places and rules.
/** The problems of `doc`, without the `file:line:column: ` before each: the rules, not the places. */
const rulesBroken = async (doc: unknown, loader?: SnapshotLoader): Promise<string[]> => withoutPlace(await problemsOf(doc, 'test.json', loader))

t.test('a valid snapshot loads with its languages, counts and version label', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const model = await new SnapshotLoader({ clock: () => new Date('2026-11-21T00:00:00Z') }).load(file)
  t.same(model.itemCounts(), { en: 25, es: 2, fr: 0 })
  t.same(model.languages, ['en', 'es', 'fr'])
  t.match(model.info, { source: file, generatedAt: '2026-11-20T09:30:00Z', loadedAt: new Date('2026-11-21T00:00:00Z'), version: /^[A-Za-z0-9_-]{27}$/ })
  t.equal((await loadSnapshotFile(file)).info.version, model.info.version, 'the same bytes, the same version')
  t.not((await modelOf(`${JSON.stringify(smallSnapshot())} `)).info.version, model.info.version, 'any byte changes it')
})

t.test('generated_at is optional', async t => {
  t.equal((await modelOf({ languages: { en: [] } })).info.generatedAt, null)
})

t.test('a UTF-8 byte order mark is accepted (some editors write one)', async t => {
  const model = await modelOf(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(smallSnapshot()))]))
  t.same(model.itemCounts(), { en: 25, es: 2, fr: 0 })
})

t.test('unknown fields are allowed, at the top, on items and inside them', async t => {
  const doc = smallSnapshot()
  doc.format_version = 2
  doc.languages.en![0] = makeItem(1, '2024-01-01', [7], { internal_note: 'x', display_image: { url: 'u', width: 1, height: 2, alt: 'a' } as never })
  t.equal((await modelOf(doc)).itemCounts().en, 25)
})

t.test('not JSON: every problem says where, as a line and column', async t => {
  t.same(await problemsOf(''), ['test.json: the file is empty'])
  t.match(await problemsOf('{\n  "languages": {\n    x\n}'), [/^test\.json:3:5: not a snapshot document: /])
  t.match(await problemsOf(JSON.stringify(smallSnapshot()).slice(0, -10)), [/^test\.json:1:\d+: /])
  t.match(await problemsOf('{"languages": {"en": ['), [/^test\.json:1:\d+: not a snapshot document: /])
  t.match(await problemsOf('{"languages": {}} trailing'), [/^test\.json:1:19: not a snapshot document: /])
  t.match(await problemsOf(Buffer.from([0x7b, 0xff, 0x7d])), [/^test\.json(:1:2)?: .*not valid UTF-8/])
})

t.test('a key of any length is quoted cut, as a value is: the report stays small whatever the file holds', async t => {
  const long = 'z'.repeat(1 << 20)
  const cut = `"${'z'.repeat(56)}...`
  const documents = [
    [`{"languages": {"${long}": []}}`, 'a language that is no language code'],
    [`{"languages": {"en": []}, "${long}": 1, "${long}": 2}`, 'a top-level key given twice'],
    [`{"languages": {"en": [], "${long}": {}}}`, 'a language whose items are not a list'],
    [`{"languages": {"en": []}, "${long}": [}`, 'a member that is not JSON']
  ]
  for (const [text, what] of documents) {
    const problems = await problemsOf(text as string)
    t.ok(problems.length > 0 && problems.every(line => line.length < 400), `${what}: ${problems.join(' | ').slice(0, 300)}`)
    t.ok(problems.some(line => line.includes(cut)), `${what}: the key quoted cut`)
  }
})

t.test('a problem line is at most 1,000 characters, whatever put it there', async t => {
  const report = new ValidationReport(5)
  report.add(`x.json:1: ${'y'.repeat(5000)}`)
  report.add('x.json:2: short')
  t.same(report.lines().map(line => line.length), [1000, 15])
  t.match(report.lines()[0], /^x\.json:1: y+\.\.\.$/)
})

t.test('the shape of the document', async t => {
  for (const text of ['[]', 'null', '{"languages": []}', '{"languages": {"en": {}}}']) {
    t.match(await problemsOf(text), [/^test\.json:1:\d+: not a snapshot document: /], text)
  }
  t.same(await problemsOf('{}'), ['test.json: languages: must name at least one language'])
  t.same(await problemsOf('{"languages": {}}'), ['test.json: languages: must name at least one language'])
  t.same(await problemsOf('{"generated_at": "yesterday", "languages": {"en": []}}'), ['test.json:1:18: generated_at: "yesterday" is not an ISO-8601 timestamp'])
})

t.test('language keys must be path segments; __proto__ and constructor are refused', async t => {
  for (const key of ['EN', 'eng', 'en_GB', 'pt-BR', '__proto__', 'constructor', '']) {
    t.match(await rulesBroken(`{"languages": {"en": [], ${JSON.stringify(key)}: []}}`), [/is not a language segment/], key)
  }
  t.same((await modelOf('{"languages": {"pt-br": [], "zh-hant": []}}')).languages, ['pt-br', 'zh-hant'])
})

t.test('every broken item rule is reported with its place and JSON path', async t => {
  const doc = smallSnapshot()
  const en = doc.languages.en as Array<Record<string, unknown>>
  Object.assign(en[1]!, { backdate: '2024-02-30' })
  Object.assign(en[2]!, { pk: '3' })
  delete en[3]!.stories
  Object.assign(en[4]!, { display_image: { url: 'x', width: 1.5, height: 1 } })
  Object.assign(en[5]!, { companies: [7, -1] })
  Object.assign(en[6]!, { translated_languages: [{ language_code: 'fr', language: 'Français' }] })
  Object.assign(en[7]!, { pk: 2 ** 53 })
  Object.assign(en[8]!, { is_translated: 'yes', story_item_count: 'x' })
  t.same(await rulesBroken(doc), [
    'languages.en[1].backdate: "2024-02-30" is not a calendar date (YYYY-MM-DD)',
    'languages.en[2].pk: expected an integer, got "3"',
    'languages.en[3].stories: is required',
    'languages.en[4].display_image.width: expected an integer, got 1.5',
    'languages.en[5].companies[1]: -1 is below 0',
    'languages.en[6].translated_languages[0].url: is required',
    'languages.en[7].pk: must be an integer of at most 9007199254740991 (2^53 - 1): JSON numbers past it lose precision',
    'languages.en[8].is_translated: expected a boolean, got "yes"',
    'languages.en[8].story_item_count: expected an integer or null, got "x"'
  ])
})

t.test('a bad field is placed at its own value, however many lines its item spans; a missing one where its item starts', async t => {
  const items = Array.from({ length: 400 }, (_, i) => makeItem(i + 1, '2024-01-01', [7]))
  Object.assign(items[350]!, { backdate: '2024-02-30', companies: [7, -1], display_image: { url: 'x', width: 1.5, height: 1 } })
  delete (items[351] as Partial<SnapshotItem>).stories
  const text = JSON.stringify({ languages: { en: items } }, null, 2)
  const raw = Buffer.from(text)
  const at = (offset: number) => { const { line, column } = positionOf(raw, offset); return `test.json:${line}:${column}: ` }
  const item = text.indexOf('"pk": 351,')
  const bad = raw.indexOf('"2024-02-30"')
  t.ok(positionOf(raw, bad).line > 8000, 'deep in a document of one field a line')
  t.equal(positionOf(raw, bad).column, 21, 'the value\'s column: 8 spaces, then `"backdate": `')
  t.same(await problemsOf(text), [
    `${at(bad)}languages.en[350].backdate: "2024-02-30" is not a calendar date (YYYY-MM-DD)`,
    `${at(raw.indexOf('1.5', item))}languages.en[350].display_image.width: expected an integer, got 1.5`,
    `${at(raw.indexOf('-1', item))}languages.en[350].companies[1]: -1 is below 0`,
    `${at(raw.lastIndexOf('{', raw.indexOf('"pk": 352,')))}languages.en[351].stories: is required`
  ])
  // On one line, columns count characters, not bytes or UTF-16 units.
  const one = JSON.stringify({ languages: { en: [makeItem(1, '2024-01-01', []), makeItem(2, '2024-13-01', [], { translated_title: 'Ünïcödé 😀' })] } })
  t.same(await problemsOf(one), [`test.json:1:${[...one.slice(0, one.indexOf('"2024-13-01"'))].length + 1}: languages.en[1].backdate: "2024-13-01" is not a calendar date (YYYY-MM-DD)`])
})

t.test('a syntax error inside an item is placed where it is, not where the item starts', async t => {
  const text = `{"languages": {"en": [\n  ${JSON.stringify(makeItem(1, '2024-01-01', []))},\n  {"pk": 2,\n   "x": tru}\n]}}`
  t.match(await problemsOf(text), [/^test\.json:4:\d+: languages\.en\[1\]: not valid JSON: /])
})

t.test('a syntax error in any other member is placed where it is, as an item\'s is, and told the same on every Node', async t => {
  t.same(await problemsOf('{"generated_at": "2026-11-24T10:00:00Z",\n "extra": {"a": [1,\n   2 3]},\n "languages": {"en": []}}'),
    ['test.json:3:6: extra: not valid JSON: expected \',\' or "]", found "3"'])
  t.same(await problemsOf('{"extra": {"a": tru},\n "languages": {"en": []}}'), ['test.json:1:17: extra: not valid JSON: unexpected "t" where a value belongs'])
})

t.test('an item nested deeper than 64 levels is refused with its place, in either format, not a stack overflow', async t => {
  const deep = (levels: number): never => JSON.parse('['.repeat(levels) + ']'.repeat(levels)) as never
  const item = (levels: number) => makeItem(1, '2024-01-01', [], { series: deep(levels) })
  // The item is the first level: its series may nest 63 more.
  t.ok(await modelOf({ languages: { en: [item(63)] } }), '64 levels in all are served')
  t.ok(await modelOf(`${JSON.stringify({ language: 'en', ...item(63) })}\n`, 'snapshot.jsonl'), 'in JSON Lines too')
  const text = JSON.stringify({ languages: { en: [item(64)] } })
  t.same(await problemsOf(text), [`test.json:1:${text.indexOf('['.repeat(64)) + 64}: not a snapshot document: a value nested deeper than 64 levels`], 'the bracket one level too deep')
  const line = JSON.stringify({ language: 'en', ...item(64) })
  t.same(await problemsOf(`${line}\n`, 'test.jsonl'), [`test.jsonl:1:${line.indexOf('"series":') + 10}: series: nested deeper than 64 levels (the item counted)`], 'at its value\'s column')
  const huge = JSON.stringify(makeItem(1, '2024-01-01', [])).replace('"series":null', `"series":${'['.repeat(200_000)}${']'.repeat(200_000)}`)
  t.match(await problemsOf(`{"languages": {"en": [${huge}]}}`), [/^test\.json:1:\d+: not a snapshot document: a value nested deeper than 64 levels$/], '200,000 levels: one line')
  const hugeLine = huge.replace('{', '{"language":"en",')
  t.same(await problemsOf(`${hugeLine}\n`, 'test.jsonl'), [`test.jsonl:1:${hugeLine.indexOf('"series":') + 10}: series: nested deeper than 64 levels (the item counted)`])
})

t.test('a pk repeated within a language is reported against its first use', async t => {
  const doc = smallSnapshot()
  ;(doc.languages.en as Array<Record<string, unknown>>)[7]!.pk = 3
  ;(doc.languages.es as Array<Record<string, unknown>>)[1]!.pk = 101
  t.same(await rulesBroken(doc), ['languages.en[7].pk: 3 repeats languages.en[2]', 'languages.es[1].pk: 101 repeats languages.es[0]'])
  const other = smallSnapshot()
  other.languages.fr = [makeItem(1, '2024-01-01', [])]
  t.equal((await modelOf(other)).itemCounts().fr, 1, 'the same pk in two languages is fine')
})

t.test('repeated pks are reported along with schema problems, in the document\'s order', async t => {
  t.same(await rulesBroken({ languages: { en: [makeItem(5, '2024-01-01', []), { ...makeItem(5, '2024-13-01', []) }, makeItem(5, '2024-01-01', [])], fr: [null, { pk: 'x' }] } }), [
    'languages.en[1].backdate: "2024-13-01" is not a calendar date (YYYY-MM-DD)',
    'languages.en[2].pk: 5 repeats languages.en[0]',
    'languages.fr[0]: expected SnapshotItem object, got null',
    'languages.fr[1].is_translated: is required',
    'languages.fr[1].translated_languages: is required',
    'languages.fr[1].translated_title: is required',
    'languages.fr[1].backdate: is required',
    'languages.fr[1].translated_abstract: is required',
    'languages.fr[1].display_image: is required',
    'languages.fr[1].series: is required',
    'languages.fr[1].company_response_summary: is required',
    'languages.fr[1].company_response_responded: is required',
    'languages.fr[1].responded_to_article: is required',
    'languages.fr[1].translated_url: is required',
    'languages.fr[1].stories: is required',
    'languages.fr[1].story_item_count: is required',
    'languages.fr[1].content_type_display: is required',
    'languages.fr[1].untranslated_content_type: is required',
    'languages.fr[1].companies: is required',
    'languages.fr[1].pk: expected an integer, got "x"'
  ])
})

t.test('a wholly wrong file is reported up to the cap, and the report says it stopped', async t => {
  const doc = { languages: { en: Array.from({ length: 200 }, (_, i) => ({ pk: i })) } }
  const problems = await problemsOf(doc)
  t.equal(problems.length, 51)
  t.equal(problems[50], '(stopped after 50 problems; fix these and check again)')
  t.same((await problemsOf(doc, 'test.json', new SnapshotLoader({ problemCap: 3 }))).length, 4)
  const { translated_title: _, ...untitled } = makeItem(1, '2024-01-01', [])
  t.same(await rulesBroken({ languages: { en: [untitled] } }, new SnapshotLoader({ problemCap: 1 })),
    ['languages.en[0].translated_title: is required', '(stopped after 1 problem; fix these and check again)'],
    'a missing field is one line, though the schema reports it twice')
})

t.test('the error names the file and lists each problem', async t => {
  const file = await writeSnapshot(t, '{"languages": {}}', 'bad.json')
  await t.rejects(loadSnapshotFile(file), {
    name: 'SnapshotError',
    code: 'SNAPSHOT_ERR_INVALID',
    file,
    message: `snapshot ${file} is invalid (1 problem):\n  bad.json: languages: must name at least one language`
  })
})

t.test('a file that cannot be read', async t => {
  const dir = await tempDir(t)
  await t.rejects(loadSnapshotFile(join(dir, 'missing.json')), { code: 'SNAPSHOT_ERR_UNREADABLE', problems: ['the file does not exist'] })
  await mkdir(join(dir, 'folder.json'))
  await t.rejects(loadSnapshotFile(join(dir, 'folder.json')), { code: 'SNAPSHOT_ERR_UNREADABLE', problems: ['the path is a directory, not a file'] })
  const locked = await writeSnapshot(t, smallSnapshot(), 'locked.json')
  await chmod(locked, 0o000)
  t.teardown(() => chmod(locked, 0o644))
  // root reads any file whatever its mode; the check only means something for other users.
  if (process.getuid?.() !== 0) {
    await t.rejects(loadSnapshotFile(locked), { code: 'SNAPSHOT_ERR_UNREADABLE', problems: ['permission denied'] })
  }
})

t.test('a full report is the report, whatever stops the read after it', async t => {
  const item = (pk: number) => JSON.stringify(makeItem(pk, '2024-01-01', [1], { translated_abstract: 'x'.repeat(300) }))
  const pool = new ParsePool({ threads: 2 })
  t.teardown(() => pool.close())
  const problems = async (text: string | Buffer, problemCap = 50) => {
    const inline = await problemsOf(text, 'bad.json', new SnapshotLoader({ batchBytes: 4096, problemCap }))
    t.same(await problemsOf(text, 'bad.json', new SnapshotLoader({ batchBytes: 4096, problemCap, pool: poolForAnySize(pool) })), inline, 'the same on the pool')
    return withoutPlace(inline)
  }
  const stop = '(stopped after 1 problem; fix these and check again)'
  // A full report, then a document that stops being followed: the report, not what stopped it.
  t.same(await problems('{"languages":{"en":[{"pk":1}]]}', 1), ['languages.en[0].is_translated: is required', stop])
  // A full report, then bytes that are not UTF-8 a chunk later: the report.
  const notText = Buffer.concat([Buffer.from(`{"languages":{"en":[{"pk":1},${Array.from({ length: 4000 }, (_, i) => item(i + 2)).join(',')}],"x":"`), Buffer.from([0xff]), Buffer.from('"}}')])
  t.ok(notText.indexOf(0xff) > 1024 * 1024, 'the bad byte a chunk later')
  t.same(await problems(notText, 1), ['languages.en[0].is_translated: is required', stop])
  // A bad language code after a repeated pk: the repeat is found, as the items before the code were taken.
  t.same(await problems(`{"languages":{"en":[${item(1)},${item(1)}],"x y":[]}}`), ['languages.en[1].pk: 1 repeats languages.en[0]', `languages["x y"]: ${(await import('../../../src/snapshot/load/validation-report.js')).NOT_A_LANGUAGE}`])
})

t.test('an item longer than the loader holds whole is refused where it starts, as a JSON Lines line is', async t => {
  // Counted as it is carried from one 1 MiB read to the next: 3 MiB against 1 MiB.
  const doc = { languages: { en: [makeItem(1, '2024-01-01', [1]), makeItem(2, '2024-01-01', [1], { translated_abstract: 'x'.repeat(3 * 1024 * 1024) })] } }
  const loader = new SnapshotLoader({ maxItemBytes: 1024 * 1024 })
  const problems = await problemsOf(JSON.stringify(doc), 'test.json', loader)
  t.match(problems, [/^test\.json:1:\d+: not a snapshot document: the item that starts here is longer than 1 MiB$/])
  const shorter = await writeSnapshot(t, { languages: { en: [makeItem(1, '2024-01-01', [1], { translated_abstract: 'x'.repeat(900 * 1024) })] } })
  const model = await loader.load(shorter)
  t.teardown(() => model.memory.retire())
  t.equal(model.itemCounts().en, 1, 'a shorter one is read')
})

// src/snapshot/load/merge-batches.ts: MergeQueue, batches merged in the order sent, whichever parse thread answers first.
/** A parsed batch that is nothing but its number (as `count`) and the read memory it gives back. */
function parsed (number: number, read: Uint8Array = Buffer.alloc(1)): ParsedBatch {
  return { count: number, read } as unknown as ParsedBatch
}

/** A batch promise resolved when the test says so, as a parse thread's reply would be. */
function later (): { promise: Promise<ParsedBatch>, resolve: (batch: ParsedBatch) => void } {
  let settle!: (batch: ParsedBatch) => void
  const promise = new Promise<ParsedBatch>(resolve => { settle = resolve })
  return { promise, resolve: settle }
}

t.test('batches merge in the order they were sent, effects in their place, whatever order the threads answer in', async t => {
  const queue = new MergeQueue(() => {})
  const seen: string[] = []
  const merge = (batch: ParsedBatch): boolean => { seen.push(`batch ${batch.count}`); return true }
  queue.step(() => seen.push('effect before any batch') > 0)
  t.same(seen, ['effect before any batch'], 'an effect with nothing queued runs at once')
  const first = later()
  const second = later()
  queue.batch(first.promise, merge)
  queue.step(() => seen.push('effect after batch 1') > 0)
  queue.batch(second.promise, merge)
  t.equal(queue.length, 3)
  second.resolve(parsed(2))
  first.resolve(parsed(1))
  t.equal(await queue.mergeUntil(1), true)
  t.same(seen, ['effect before any batch', 'batch 1', 'effect after batch 1'], 'mergeUntil(1) leaves the last step queued')
  t.equal(await queue.mergeUntil(0), true)
  t.same(seen.slice(3), ['batch 2'])
  t.equal(queue.length, 0)
})

t.test('a step that says stop stops the merging for good, the steps after it left unmerged', async t => {
  const queue = new MergeQueue(() => {})
  const seen: number[] = []
  queue.batch(Promise.resolve(parsed(1)), batch => { seen.push(batch.count); return false })
  queue.batch(Promise.resolve(parsed(2)), batch => { seen.push(batch.count); return true })
  t.equal(await queue.mergeUntil(0), false)
  t.same(seen, [1])
  t.equal(queue.length, 1)
  t.equal(await queue.mergeUntil(0), false, 'and stays stopped')
  queue.step(() => { seen.push(3); return true })
  t.same(seen, [1], 'a step queued after the stop is not taken')
})

t.test('a merged batch gives its read memory back for the next batch', async t => {
  const memory = new BatchMemory(16)
  const queue = new MergeQueue(read => memory.give(read))
  const read = memory.take(16)
  queue.batch(Promise.resolve(parsed(1, read)), () => true)
  await queue.mergeUntil(0)
  t.equal(memory.take(16).buffer, read.buffer, 'the same memory is taken again')
})

t.test('a failed batch rejects mergeUntil, and the batches after it never go unhandled', async t => {
  const queue = new MergeQueue(() => {})
  const failure = new Error('the parse thread died')
  queue.batch(Promise.reject(failure), () => true)
  // Rejected before anyone awaits it: without the queue's own handler this would be an unhandled rejection.
  queue.batch(Promise.reject(failure), () => true)
  await t.rejects(queue.mergeUntil(0), failure)
})
