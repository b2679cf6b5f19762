// JSON Lines snapshots: the same model as format v1, streamed in chunks, and every problem
// reported with its line number.
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SnapshotError } from '../../../src/errors.js'
import { SnapshotLoader, loadSnapshotFile } from '../../../src/snapshot/load/load-snapshot.js'
import type { BatchTask } from '../../../src/snapshot/load/parse-batch.js'
import { ParsePool, THREADS_FROM_BYTES } from '../../../src/snapshot/load/parse-pool.js'
import { READ_CHUNK } from '../../../src/snapshot/load/read-chunks.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { buildTestApp, EXPLORE, makeItem, poolForAnySize, smallSnapshot, tempDir, toJsonLines } from '../../helpers.js'

/** How a test asks to load: batches of `batchBytes`, on `threads` pool threads (none: on this thread). */
interface LoadWith {
  batchBytes?: number
  threads?: number
  problemCap?: number
  maxItemBytes?: number
}

const pools = new Map<number, ParsePool>()
t.teardown(async () => { for (const pool of pools.values()) await pool.close() })

/** The production loader, with the parts a test chooses. */
function loaderWith ({ threads = 0, ...parts }: LoadWith = {}): SnapshotLoader {
  if (threads === 0) return new SnapshotLoader(parts)
  let pool = pools.get(threads)
  if (pool === undefined) pools.set(threads, pool = new ParsePool({ threads }))
  return new SnapshotLoader({ ...parts, pool: poolForAnySize(pool) })
}

async function loadJsonLinesFile (file: string, options: LoadWith = {}): Promise<SnapshotModel> {
  return await loaderWith(options).load(file)
}

async function writeLines (t: Parameters<typeof tempDir>[0], text: string | Buffer, name = 'snapshot.jsonl'): Promise<string> {
  const file = join(await tempDir(t), name)
  await writeFile(file, text)
  return file
}

async function problemsOf (t: Parameters<typeof tempDir>[0], text: string | Buffer, options: LoadWith = {}): Promise<readonly string[]> {
  const file = await writeLines(t, text)
  try {
    await loadJsonLinesFile(file, options)
  } catch (error) {
    if (error instanceof SnapshotError) return error.problems
    throw error
  }
  throw new Error('the snapshot was accepted')
}

/** Every page of every language, as the model serves it. */
function pagesOf (model: SnapshotModel): string[] {
  return model.languages.flatMap(code => {
    const listing = model.language(code)!
    return [null, [7], [8, 9]].map(companies => `${code} ${String(companies)}: ${listing.page(companies, 0, 100).items.toString()}`)
  })
}

t.test('a JSON Lines snapshot gives the model the same items give as one JSON document', async t => {
  const doc = smallSnapshot()
  const json = join(await tempDir(t), 'snapshot.json')
  await writeFile(json, JSON.stringify(doc))
  const lines = await writeLines(t, toJsonLines(doc), 'snapshot.ndjson')
  const fromJson = await loadSnapshotFile(json)
  const fromLines = await loadSnapshotFile(lines)
  t.same(fromLines.itemCounts(), { en: 25, es: 2, fr: 0 }, 'fr, listed by the header only, is served empty')
  t.equal(fromLines.info.generatedAt, '2026-11-20T09:30:00Z')
  t.match(fromLines.info.version, /^[A-Za-z0-9_-]{27}$/)
  t.same(pagesOf(fromLines), pagesOf(fromJson))
})

t.test('the same items answer the same bytes, whatever the format', async t => {
  const doc = smallSnapshot()
  const fromJson = await buildTestApp(t, doc)
  const fromLines = await buildTestApp(t, doc, { snapshotPath: await writeLines(t, toJsonLines(doc)) })
  t.match(fromLines.snapshots.file, /\.jsonl$/)
  for (const url of [EXPLORE, `${EXPLORE}?companies=7&limit=3&offset=3`, '/es/api/internal/explore/', '/fr/api/internal/explore/']) {
    const a = await fromJson.inject(url)
    const b = await fromLines.inject(url)
    t.equal(b.statusCode, 200, url)
    t.equal(b.body, a.body, url)
  }
})

t.test('without a header: the languages are those items name, and there is no generated_at', async t => {
  const model = await loadJsonLinesFile(await writeLines(t, toJsonLines(smallSnapshot(), { header: false })))
  t.same(model.itemCounts(), { en: 25, es: 2 })
  t.equal(model.info.generatedAt, null)
})

t.test('CRLF line ends, blank lines and a byte order mark are accepted', async t => {
  const text = `\ufeff${toJsonLines(smallSnapshot(), { eol: '\r\n' }).replace(/\r\n/, '\r\n\r\n   \r\n\t\n')}\n\n`
  const model = await loadJsonLinesFile(await writeLines(t, text))
  t.same(model.itemCounts(), { en: 25, es: 2, fr: 0 })
})

t.test('a file read in chunks smaller than its lines, with characters cut by the chunks, loads whole', async t => {
  const items = Array.from({ length: 60 }, (_, i) => makeItem(i + 1, '2024-03-01', [1], { translated_title: `Ünïcödé 😀 ${'é'.repeat(i)} 日本` }))
  const text = toJsonLines({ languages: { en: items } })
  const big = await loadJsonLinesFile(await writeLines(t, text), { batchBytes: 7 })
  const whole = await loadJsonLinesFile(await writeLines(t, text))
  t.equal(big.itemCounts().en, 60)
  t.same(pagesOf(big), pagesOf(whole), 'every character intact across 7-byte chunks')
  t.match(big.language('en')!.page(null, 0, 1).items.toString(), /"translated_title":"Ünïcödé 😀 (é){59} 日本"/)
  t.ok(Buffer.byteLength(text) > 7 * 100)
  t.equal(READ_CHUNK, 1024 * 1024, 'the real chunk: 1 MiB')
})

t.test('every kind of bad line is reported with its line number', async t => {
  const item = (pk: number, extra: object = {}) => JSON.stringify({ language: 'en', ...makeItem(pk, '2024-01-01', [1]), ...extra })
  const header = JSON.stringify({ snapshot: 'explore', version: 1, languages: ['en', 'es'] })
  const text = [
    header, //                                                   1
    item(1), //                                                  2
    '{"language": "en", "pk": 2,', //                            3  not JSON
    '[1, 2]', //                                                 4  not an object
    item(3, { backdate: '2023-02-29' }), //                      5  not a calendar date
    JSON.stringify({ language: 'en', pk: 4 }), //               6  missing fields
    item(1), //                                                  7  repeated pk
    item(5, { language: 'de' }), //                              8  not in the header's list
    item(6, { language: 'EN' }), //                              9  not a language segment
    '', //                                                      10  blank: fine
    item(7) //                                                  11  fine
  ].join('\n')
  const problems = await problemsOf(t, text)
  t.match(problems, [
    /^snapshot\.jsonl:3: not valid JSON: .+ at column \d+$|^snapshot\.jsonl:3: not valid JSON: the line ends too early$/,
    'snapshot.jsonl:4: expected a JSON object, got [1,2]',
    'snapshot.jsonl:5:111: backdate: "2023-02-29" is not a calendar date (YYYY-MM-DD)',
    'snapshot.jsonl:6: is_translated: is required'
  ])
  t.ok(problems.includes('snapshot.jsonl:7: pk: 1 repeats line 2'), problems.join('\n'))
  t.ok(problems.includes('snapshot.jsonl:8: language: "de" is not one of the header\'s languages (en, es)'))
  t.ok(problems.some(p => p.startsWith('snapshot.jsonl:9:13: language: "EN" does not match')))
  t.notOk(problems.some(p => /:(1|2|10|11): /.test(p)), 'good lines are not reported')
})

t.test('a bad field is placed at its own column of its line; a missing one names the line', async t => {
  const line = `  ${JSON.stringify({ language: 'en', ...makeItem(3, '2023-02-29', [7, -1], { translated_title: 'Ünïcödé 😀 日本' }) })}`
  const missing = { language: 'en', ...makeItem(4, '2024-01-01', []) } as Partial<SnapshotItem>
  delete missing.stories
  // Columns count characters (an emoji is one), from 1.
  const column = (text: string) => [...line.slice(0, line.indexOf(text))].length + 1
  t.same(await problemsOf(t, `${line}\n${JSON.stringify(missing)}\n`), [
    `snapshot.jsonl:1:${column('"2023-02-29"')}: backdate: "2023-02-29" is not a calendar date (YYYY-MM-DD)`,
    `snapshot.jsonl:1:${column('-1]')}: companies[1]: -1 is below 0`,
    'snapshot.jsonl:2: stories: is required'
  ])
  t.equal(column('"2023-02-29"'), 119, 'counted by hand: 2 spaces and 116 characters before the value (the emoji one, not two)')
})

t.test('a bad header', async t => {
  t.same(await problemsOf(t, '{"snapshot": "explore", "version": 2}\n'), ['snapshot.jsonl:1: version: 2 is not 1'])
  t.match(await problemsOf(t, '{"snapshot": "other", "version": 1, "generated_at": "yesterday", "languages": ["EN"]}\n'), [
    'snapshot.jsonl:1: snapshot: "other" is not "explore"',
    /^snapshot\.jsonl:1: generated_at: "yesterday" is not an ISO-8601 timestamp$/,
    /^snapshot\.jsonl:1: languages\[0\]: "EN" does not match /
  ])
  const late = await problemsOf(t, `${JSON.stringify({ language: 'en', ...makeItem(1, '2024-01-01', []) })}\n{"snapshot": "explore", "version": 1}\n`)
  t.match(late, [/^snapshot\.jsonl:2: /], 'a header is only the first line: later, it is an item without its fields')
})

t.test('empty, blank or language-less files are refused', async t => {
  t.same(await problemsOf(t, ''), ['the file is empty'])
  t.same(await problemsOf(t, '\n  \n'), ['the file has no line but blank ones'])
  t.match(await problemsOf(t, '{"snapshot": "explore", "version": 1}\n'), [/names no language/])
})

t.test('invalid UTF-8 on a line is reported for that line', async t => {
  const good = JSON.stringify({ language: 'en', ...makeItem(1, '2024-01-01', []) })
  const problems = await problemsOf(t, Buffer.concat([Buffer.from(`${good}\n{"language": "en", "x": "`), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]))
  t.same(problems, ['snapshot.jsonl:2: not valid UTF-8 text'])
})

t.test('a wholly wrong file stops at the cap, and the error names the file', async t => {
  const text = Array.from({ length: 500 }, () => 'nope').join('\n')
  const file = await writeLines(t, text)
  const error = await loadJsonLinesFile(file, { problemCap: 5 }).then(() => null, (e: unknown) => e)
  t.ok(error instanceof SnapshotError)
  t.equal((error as SnapshotError).code, 'SNAPSHOT_ERR_INVALID')
  t.equal((error as SnapshotError).problems.length, 6)
  t.match((error as SnapshotError).problems.at(-1), /stopped after 5 problems/)
  t.match((error as SnapshotError).message, new RegExp(`^snapshot ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is invalid`))
})

t.test('a file that cannot be read', async t => {
  const dir = await tempDir(t)
  const missing = await loadJsonLinesFile(join(dir, 'none.jsonl')).then(() => null, (e: unknown) => e)
  t.match(missing, { code: 'SNAPSHOT_ERR_UNREADABLE', problems: ['the file does not exist'] })
})

t.test('loading gives the event loop turns', async t => {
  const items = Array.from({ length: 8000 }, (_, i) => makeItem(i + 1, '2024-01-01', [i % 50], { translated_abstract: 'x'.repeat(400) }))
  const file = await writeLines(t, toJsonLines({ languages: { en: items } }))
  let turns = 0
  let loading = true
  const tick = () => { if (loading) { turns++; setImmediate(tick) } }
  setImmediate(tick)
  const model = await loadJsonLinesFile(file)
  loading = false
  t.equal(model.itemCounts().en, 8000)
  t.ok(turns > 3, `${turns} turns of the event loop during the load`)
})

t.test('what a joined, mislabelled or odd file gets told', async t => {
  const item = (pk: number) => JSON.stringify({ language: 'en', ...makeItem(pk, '2024-01-01', []) })
  t.same(await problemsOf(t, `${item(1)}\n\ufeff${item(2)}\n`), ['snapshot.jsonl:2: a byte order mark in the middle of the file (were files joined?)'])
  t.same(await problemsOf(t, '{"snapshot": "explore", "version": 1, "language": "en"}\n'), ['snapshot.jsonl:1: language: belongs on item lines; a header lists its languages in `languages`'])
  const model = await loadJsonLinesFile(await writeLines(t, `${JSON.stringify({ snapshot: 'a field of the item', language: 'en', ...makeItem(1, '2024-01-01', []) })}\n`))
  t.same(model.itemCounts(), { en: 1 }, 'a first line with a pk is an item, whatever extra fields it has')
  const document = JSON.stringify({ languages: { en: [makeItem(1, '2024-01-01', []), makeItem(2, '2024-01-01', [])] } })
  t.same(await problemsOf(t, document, { maxItemBytes: 100, batchBytes: 16 }), ['snapshot.jsonl:1: line 1 is longer than 100 bytes: is it one JSON document named .jsonl?'])
})

t.test('a change file given as a snapshot is told so in one problem, not each line\'s missing fields', async t => {
  const changes = [
    JSON.stringify({ changes: 'explore', version: 1, id: 'chg-0001' }),
    ...Array.from({ length: 30 }, (_, i) => JSON.stringify(i % 2 === 0 ? { op: 'upsert', language: 'en', ...makeItem(i, '2024-01-01', []) } : { op: 'delete', language: 'en', pk: i }))
  ].join('\n')
  const told = 'snapshot.jsonl:2: this is a change file (its header says "changes"), not a snapshot: give it as a change file, after the snapshot it changes'
  for (const options of [{}, { batchBytes: 64 }, { threads: 2, batchBytes: 200 }]) {
    t.same(await problemsOf(t, `\n${changes}\n`, options), [told], JSON.stringify(options))
  }
  await t.rejects(buildTestApp(t, smallSnapshot(), { snapshotPath: await writeLines(t, `\n${changes}\n`) }), { code: 'SNAPSHOT_ERR_INVALID', problems: [told] }, 'the service\'s own SNAPSHOT_PATH')
  // A header that says both is a snapshot's; a `changes` line after the first value is a bad item, as any other.
  t.match(await problemsOf(t, '{"snapshot": "explore", "changes": "explore", "version": 1}\n'), [/names no language/])
  const item = JSON.stringify({ language: 'en', ...makeItem(1, '2024-01-01', []) })
  t.match(await problemsOf(t, `${item}\n${changes}\n`), [/^snapshot\.jsonl:2: pk: is required$/])
})

t.test('a pk past 2^53 is refused without quoting the number JSON.parse rounded it to', async t => {
  const item = JSON.stringify({ language: 'en', ...makeItem(1, '2024-01-01', [7]) })
  const text = `${item.replace('"pk":1', '"pk":9007199254740993')}\n${item.replace('"companies":[7]', '"companies":[-9007199254740993]')}\n`
  t.same(await problemsOf(t, text), [
    'snapshot.jsonl:1:23: pk: must be an integer of at most 9007199254740991 (2^53 - 1): JSON numbers past it lose precision',
    'snapshot.jsonl:2:475: companies[0]: must be an integer of at least 0'
  ], 'no 9007199254740992, which the file does not say')
})

/** A file of `count` items in two languages, with a header: many batches when read in small chunks. */
function manyLines (count: number): string {
  const item = (i: number) => makeItem(i + 1, `2024-0${1 + (i % 9)}-1${i % 10}`, [7 + (i % 3)], { translated_title: `Ünïcödé 😀 ${i} ${'é'.repeat(i % 40)}` })
  return toJsonLines({ generated_at: '2026-11-22T00:00:00Z', languages: { en: Array.from({ length: count }, (_, i) => item(i)), es: Array.from({ length: count / 4 }, (_, i) => item(i)) } })
}

t.test('parse threads load the same model as the loading thread, batch by batch, and the same version', async t => {
  const file = await writeLines(t, manyLines(400))
  const inline = await loadJsonLinesFile(file, { threads: 0 })
  for (const [threads, batchBytes] of [[1, 4096], [2, 1000], [3, 50_000]] as const) {
    const threaded = await loadJsonLinesFile(file, { threads, batchBytes })
    t.same(threaded.itemCounts(), { en: 400, es: 100 }, `${threads} threads, batches of ${batchBytes} bytes`)
    t.same(pagesOf(threaded), pagesOf(inline))
    t.equal(threaded.info.version, inline.info.version)
    t.equal(threaded.info.generatedAt, '2026-11-22T00:00:00Z')
  }
})

t.test('parse threads report the same problems, in line order, across batches, and stop at the cap', async t => {
  const item = (pk: number, extra: object = {}) => JSON.stringify({ language: 'en', ...makeItem(pk, '2024-01-01', [1], { translated_abstract: 'x'.repeat(100) }), ...extra })
  const lines = [JSON.stringify({ snapshot: 'explore', version: 1, languages: ['en'] })]
  for (let pk = 1; pk <= 300; pk++) {
    // A problem of each kind every few lines: some found by the threads, some only when batches merge.
    if (pk % 50 === 7) lines.push(item(pk - 3)) // a pk repeated from an earlier batch
    else if (pk % 50 === 19) lines.push(item(pk, { language: 'es' })) // not a language of the header
    else if (pk % 50 === 31) lines.push('{"nope"')
    else if (pk % 50 === 43) lines.push(item(pk, { backdate: '2023-02-29' }))
    else lines.push(item(pk))
  }
  const file = await writeLines(t, `${lines.join('\n')}\n`)
  const problems = async (options: LoadWith) => await loadJsonLinesFile(file, options).then(() => [], (error: SnapshotError) => error.problems)
  const inline = await problems({ threads: 0, problemCap: 1000 })
  t.equal(inline.length, 24)
  t.match(inline.slice(0, 4), [/^snapshot\.jsonl:8: pk: 4 repeats line 5$/, /:20: language: "es" is not one/, /:32: not valid JSON/, /:44:\d+: backdate: /])
  const lineOf = (problem: string) => Number(/^snapshot\.jsonl:(\d+):/.exec(problem)?.[1])
  t.same(inline.map(lineOf), [...inline.map(lineOf)].sort((a, b) => a - b), 'in line order')
  t.same(await problems({ threads: 2, batchBytes: 700, problemCap: 1000 }), inline, 'the same report from threads')
  const capped = await problems({ threads: 2, batchBytes: 700, problemCap: 10 })
  t.same(capped, [...inline.slice(0, 10), '(stopped after 10 problems; fix these and check again)'], 'the first 10, then a stop')
})

t.test('a header after batches of blank lines is still the header; after an item, it is a bad item', async t => {
  const body = toJsonLines({ generated_at: '2026-11-22T00:00:00Z', languages: { en: [makeItem(1, '2024-01-01', [])], fr: [] } })
  const model = await loadJsonLinesFile(await writeLines(t, `${'\n'.repeat(100)}${body}`), { threads: 2, batchBytes: 16 })
  t.same(model.itemCounts(), { en: 1, fr: 0 }, 'the header\'s fr is served')
  t.equal(model.info.generatedAt, '2026-11-22T00:00:00Z')
  const [header, first] = body.split('\n') as [string, string]
  const late = await loadJsonLinesFile(await writeLines(t, `${first}\n${'\n'.repeat(100)}${header}\n`), { threads: 2, batchBytes: 16 }).then(() => null, (e: SnapshotError) => e.problems)
  t.match(late, [/^snapshot\.jsonl:102: /])
})

t.test('a parse thread that dies fails the load as the service\'s error, not the file\'s, and nothing is left unhandled', async t => {
  // A thread that dies at its first batch, as one with a bug (or out of memory) would.
  const dying = await writeLines(t, 'export function ready () { return true }\nexport default function () { process.exit(3) }\n', 'dying.mjs')
  const pool = new ParsePool({ threads: 2, script: pathToFileURL(dying) })
  t.teardown(() => pool.close())
  const file = await writeLines(t, manyLines(400))
  const failed = await new SnapshotLoader({ pool: poolForAnySize(pool), batchBytes: 1000 }).load(file).then(() => null, (error: unknown) => error)
  t.match(failed, { message: /^a parse thread failed: / })
  t.notOk('code' in (failed as object), 'no code: not the file system\'s error, so not reported as the file\'s')
  t.notOk(failed instanceof SnapshotError)
})

t.test('threads that cannot start (their code will not load) leave the parsing to the loading thread, said once', async t => {
  // As a runtime whose loader does not reach a worker's TypeScript entry: the thread fails before its code runs.
  const failing = await writeLines(t, 'throw new Error("cannot load")\n', 'failing.mjs')
  const pool = new ParsePool({ threads: 2, script: pathToFileURL(failing) })
  t.teardown(() => pool.close())
  const warnings: object[] = []
  const loader = new SnapshotLoader({ pool: poolForAnySize(pool), log: { warn: fields => warnings.push(fields) } })
  const file = await writeLines(t, manyLines(50))
  for (let load = 0; load < 2; load++) t.same((await loader.load(file)).itemCounts(), { en: 50, es: 12 }, 'parsed all the same')
  t.match(warnings, [{ reason: /cannot load/ }], 'one log line')
  t.match(pool.status(), { threads: 0, fallbacks: 2, failure: /cannot load/ }, 'the metrics count every load that fell back')
})

t.test('parse threads for large files only, and a core left to the requests while a snapshot is served', async t => {
  const pool = new ParsePool({ threads: 2 })
  t.teardown(() => pool.close())
  t.equal((await pool.parserFor(THREADS_FROM_BYTES - 1, false)).threads, 0)
  t.equal(pool.status().threads, 0, 'no thread started for a small file')
  t.equal((await pool.parserFor(THREADS_FROM_BYTES, false)).threads, 2, 'a first load: every thread')
  t.equal((await pool.parserFor(THREADS_FROM_BYTES, true)).threads, 1, 'a reload: one fewer')
  t.equal(pool.status().threads, 2)
  const one = new ParsePool({ threads: 1 })
  t.teardown(() => one.close())
  t.equal((await one.parserFor(2 ** 40, true)).threads, 1, 'one thread at least')
})

/** What the timed script's batches answer: the thread that parsed them and when (Date.now()). */
interface TimedBatch { threadId: number, start: number }

t.test('a load\'s next batch waits on its lane\'s thread, which goes on to it while the loading thread is busy', async t => {
  // Batches of 100 ms of a thread's work that say where and when they ran.
  const timed = await writeLines(t, [
    'import { threadId } from "node:worker_threads"',
    'export default function parse () { const start = Date.now(); while (Date.now() < start + 100); return { threadId, start } }',
    'export function ready () { return true }',
    'export function rest () {}'
  ].join('\n'), 'timed.mjs')
  const pool = new ParsePool({ threads: 2, script: pathToFileURL(timed) })
  t.teardown(() => pool.close())
  const batch = (): BatchTask => ({ kind: 'lines', bytes: Buffer.allocUnsafeSlow(1), first: false })
  const reload = await pool.parserFor(Infinity, true)
  const both = [reload.parse(batch()), reload.parse(batch())]
  // The loading thread busy, as with requests during a reload, for longer than the two batches take.
  const busyUntil = Date.now() + 1000
  while (Date.now() < busyUntil);
  const [first, second] = await Promise.all(both) as unknown as TimedBatch[]
  t.equal(first?.threadId, second?.threadId, 'a reload keeps to its one lane: both on one thread')
  t.ok((second?.start ?? Infinity) < busyUntil, 'the second began behind the first, while the loading thread was busy')
  reload.done()
  const load = await pool.parserFor(Infinity, false)
  const four = await Promise.all(Array.from({ length: 4 }, async () => await load.parse(batch()))) as unknown as TimedBatch[]
  t.equal(new Set(four.map(answer => answer.threadId)).size, 2, 'a first load: both threads')
})

t.test('a line too long is named by its number, and caught within a batch of its limit', async t => {
  const message = (line: number) => `snapshot.jsonl:${line}: line ${line} is longer than 100 bytes: is it one JSON document named .jsonl?`
  t.same(await problemsOf(t, `{"snapshot":"explore","version":1}\n${'a'.repeat(200)}\n`, { maxItemBytes: 100, batchBytes: 16 }), [message(2)], 'the lines before it are counted first')
  t.same(await problemsOf(t, `${'a'.repeat(120)}\n`, { maxItemBytes: 100, batchBytes: 16 }), [message(1)], '20 bytes over, in reads that grow')
  t.same(await problemsOf(t, `{"snapshot":"explore","version":1}\n${'a'.repeat(200)}\n`, { maxItemBytes: 100, batchBytes: 16, threads: 2 }), [message(2)], 'from parse threads too')
  // Carried to 96 bytes, the next read is a whole batch (64): a line that ends within it, past the limit, was
  // sent to the parser as it was.
  t.same(await problemsOf(t, `${'a'.repeat(110)}\n{"x": 1}\n`, { maxItemBytes: 100, batchBytes: 64 }), [message(1)], 'over the limit by less than a batch, ended in the read past it')
  const longer = async (bytes: number) => (await problemsOf(t, `{"snapshot":"explore","version":1}\n${'a'.repeat(bytes)}\n`, { maxItemBytes: 100, batchBytes: 64 })).filter(problem => problem.includes('longer'))
  t.same(await longer(100), [], 'a line of the limit is not too long')
  t.same(await longer(101), [message(2)], 'a byte more is')
})

t.test('the pool\'s idle threads exit after their idle time, and the next large load starts them again', async t => {
  // One thread: each start compiles the worker's modules through the test's TypeScript loader (~2 s a thread).
  const pool = new ParsePool({ threads: 1, idleMs: 200 })
  t.teardown(() => pool.close())
  const loader = new SnapshotLoader({ pool: poolForAnySize(pool), batchBytes: 1000 })
  const file = await writeLines(t, manyLines(100))
  t.same((await loader.load(file)).itemCounts(), { en: 100, es: 25 })
  t.equal(pool.status().threads, 1, 'kept after the load')
  // piscina's idle timer is unref'd (an idle pool does not hold a process): this test holds its own.
  const keepAlive = setInterval(() => {}, 60_000)
  await new Promise<void>(resolve => { pool.on('threads', count => { if (count === 0) resolve() }) })
  clearInterval(keepAlive)
  t.equal(pool.status().threads, 0, 'gone once idle')
  t.same((await loader.load(file)).itemCounts(), { en: 100, es: 25 }, 'a later load starts them again')
  t.equal(pool.status().fallbacks, 0, 'on the threads, not the main thread')
})

t.test('the pool\'s threads are real threads under the test runner: a batch\'s bytes move to them and back', async t => {
  const pool = new ParsePool({ threads: 1 })
  t.teardown(() => pool.close())
  const parser = await pool.parserFor(Infinity, false)
  const bytes = Buffer.allocUnsafeSlow(3)
  bytes.write('{}\n')
  const batch = await parser.parse({ kind: 'lines', bytes, first: true })
  t.equal(bytes.length, 0, 'the batch\'s memory was moved (detached here)')
  t.equal(batch.read.length, 3, 'and came back with the result')
})
