import t from 'tap'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadSnapshotFile, parseSnapshot } from '../../../src/snapshot/load/load-snapshot.js'
import { SnapshotError } from '../../../src/errors.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import type { SnapshotItem } from '../../../src/schemas/snapshot.js'
import { makeItem, smallSnapshot, tempDir, writeSnapshot, type SnapshotDoc } from '../../helpers.js'

const problemsOf = (raw: string | Buffer): readonly string[] => {
  try {
    parseSnapshot(Buffer.isBuffer(raw) ? raw : Buffer.from(raw), 'test.json')
  } catch (error) {
    if (error instanceof SnapshotError) return error.problems
    throw error
  }
  throw new Error('the snapshot was accepted')
}

t.test('a valid snapshot loads with its languages, counts and version label', async t => {
  const file = await writeSnapshot(t, smallSnapshot())
  const model = await loadSnapshotFile(file, { now: () => new Date('2026-11-21T00:00:00Z') })
  t.same(model.itemCounts(), { en: 25, es: 2, fr: 0 })
  t.same(model.languages, ['en', 'es', 'fr'])
  t.match(model.info, { source: file, generatedAt: '2026-11-20T09:30:00Z', loadedAt: new Date('2026-11-21T00:00:00Z'), version: /^[A-Za-z0-9_-]{27}$/ })
  t.equal((await loadSnapshotFile(file)).info.version, model.info.version, 'the same bytes, the same version')
  t.not(parseSnapshot(Buffer.from(`${JSON.stringify(smallSnapshot())} `), 'x').info.version, model.info.version, 'any byte changes it')
})

t.test('loading a large file gives the event loop turns (a reloading service keeps answering)', async t => {
  const { writeSnapshot: generate } = await import('../../../src/generate/write-snapshot.js')
  const file = join(await tempDir(t), 'large.json')
  await generate(file, { items: 12000, format: 'lines' })
  const raw = await readFile(file)
  let turns = 0
  let loading = true
  const tick = () => { if (loading) { turns++; setImmediate(tick) } }
  setImmediate(tick)
  const model = await loadSnapshotFile(file)
  loading = false
  t.equal(model.itemCounts().en, 12000)
  t.ok(turns > 3, `${turns} turns of the event loop during the load`)
  t.same(model.itemCounts(), parseSnapshot(raw, file).itemCounts(), 'the same model as in one go')
})

t.test('generated_at is optional', async t => {
  const model = parseSnapshot(Buffer.from(JSON.stringify({ languages: { en: [] } })), 'x.json')
  t.equal(model.info.generatedAt, null)
})

t.test('a UTF-8 byte order mark is accepted (some editors write one)', async t => {
  const model = parseSnapshot(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(smallSnapshot()))]), 'bom.json')
  t.same(model.itemCounts(), { en: 25, es: 2, fr: 0 })
})

t.test('unknown fields are allowed, at the top, on items and inside them', async t => {
  const doc = smallSnapshot()
  doc.format_version = 2
  doc.languages.en![0] = makeItem(1, '2024-01-01', [7], { internal_note: 'x', display_image: { url: 'u', width: 1, height: 2, alt: 'a' } as never })
  t.doesNotThrow(() => parseSnapshot(Buffer.from(JSON.stringify(doc)), 'x.json'))
})

t.test('not JSON: the problem says where, as a line and column', async t => {
  t.same(problemsOf(''), ['the file is empty'])
  t.match(problemsOf('{\n  "languages": {\n    x\n}'), [/^not valid JSON: .* at line 3, column 5$/])
  t.same(problemsOf(JSON.stringify(smallSnapshot()).slice(0, -10)).length, 1)
  t.match(problemsOf('{"languages": {"en": ['), [/^not valid JSON: /])
  t.match(problemsOf('{"languages": {}} trailing'), [/^not valid JSON: /])
  t.same(problemsOf(Buffer.from([0x7b, 0xff, 0x7d])), ['the file is not valid UTF-8 text'])
})

t.test('the shape of the document', async t => {
  t.same(problemsOf('[]'), ['(top level): expected Explore snapshot v1 object, got []'])
  t.same(problemsOf('null'), ['(top level): expected Explore snapshot v1 object, got null'])
  t.same(problemsOf('{}'), ['languages: is required'])
  t.same(problemsOf('{"languages": {}}'), ['languages: must name at least one language'])
  t.same(problemsOf('{"languages": []}'), ['languages: expected a object, got []'])
  t.same(problemsOf('{"languages": {"en": {}}}'), ['languages.en: expected an array, got {}'])
  t.same(problemsOf('{"generated_at": "yesterday", "languages": {"en": []}}'), ['generated_at: "yesterday" is not an ISO-8601 timestamp'])
})

t.test('language keys must be path segments; __proto__ and constructor are refused', async t => {
  for (const key of ['EN', 'eng', 'en_GB', 'pt-BR', '__proto__', 'constructor', '']) {
    t.match(problemsOf(`{"languages": {"en": [], ${JSON.stringify(key)}: []}}`), [/is not a language segment/], key)
  }
  t.doesNotThrow(() => parseSnapshot(Buffer.from('{"languages": {"pt-br": [], "zh-hant": []}}'), 'x.json'))
})

t.test('every broken item rule is reported with its JSON path', async t => {
  const doc = smallSnapshot()
  const en = doc.languages.en as Array<Record<string, unknown>>
  en[41 - 25 + 24] = undefined as never // keep indexes stable below
  en.length = 25
  Object.assign(en[1]!, { backdate: '2024-02-30' })
  Object.assign(en[2]!, { pk: '3' })
  delete en[3]!.stories
  Object.assign(en[4]!, { display_image: { url: 'x', width: 1.5, height: 1 } })
  Object.assign(en[5]!, { companies: [7, -1] })
  Object.assign(en[6]!, { translated_languages: [{ language_code: 'fr', language: 'Français' }] })
  Object.assign(en[7]!, { pk: 2 ** 53 })
  Object.assign(en[8]!, { is_translated: 'yes', story_item_count: 'x' })
  t.same(problemsOf(JSON.stringify(doc)), [
    'languages.en[1].backdate: "2024-02-30" is not a calendar date (YYYY-MM-DD)',
    'languages.en[2].pk: expected an integer, got "3"',
    'languages.en[3].stories: is required',
    'languages.en[4].display_image.width: expected an integer, got 1.5',
    'languages.en[5].companies[1]: -1 is below 0',
    'languages.en[6].translated_languages[0].url: is required',
    'languages.en[7].pk: 9007199254740992 is above 9007199254740991 (integers past 2^53 lose precision in JSON)',
    'languages.en[8].is_translated: expected a boolean, got "yes"',
    'languages.en[8].story_item_count: expected an integer or null, got "x"'
  ])
})

t.test('a pk repeated within a language is reported against its first use', async t => {
  const doc = smallSnapshot()
  ;(doc.languages.en as Array<Record<string, unknown>>)[7]!.pk = 3
  ;(doc.languages.es as Array<Record<string, unknown>>)[1]!.pk = 101
  t.same(problemsOf(JSON.stringify(doc)), ['languages.en[7].pk: 3 repeats languages.en[2]', 'languages.es[1].pk: 101 repeats languages.es[0]'])
  const other = smallSnapshot()
  other.languages.fr = [makeItem(1, '2024-01-01', [])]
  t.doesNotThrow(() => parseSnapshot(Buffer.from(JSON.stringify(other)), 'x.json'), 'the same pk in two languages is fine')
})

t.test('repeated pks are reported along with schema problems', async t => {
  t.same(problemsOf(JSON.stringify({ languages: { en: [makeItem(5, '2024-01-01', []), { ...makeItem(5, '2024-13-01', []) }], es: {}, fr: [null, { pk: 'x' }] } })), [
    'languages.en[1].backdate: "2024-13-01" is not a calendar date (YYYY-MM-DD)',
    'languages.es: expected an array, got {}',
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
    'languages.fr[1].pk: expected an integer, got "x"',
    'languages.en[1].pk: 5 repeats languages.en[0]'
  ])
})

t.test('a wholly wrong file is reported up to the cap', async t => {
  const doc = { languages: { en: Array.from({ length: 200 }, (_, i) => ({ pk: i })) } }
  const problems = problemsOf(JSON.stringify(doc))
  t.equal(problems.length, 51)
  t.equal(problems[50], '(stopped after 50 problems; fix these and check again)')
  t.throws(() => parseSnapshot(Buffer.from(JSON.stringify(doc)), 'x.json', { problemCap: 3 }), { code: 'SNAPSHOT_ERR_INVALID', problems: { length: 4 } })
})

t.test('the error names the file and lists each problem', async t => {
  const file = await writeSnapshot(t, '{"languages": {}}', 'bad.json')
  await t.rejects(loadSnapshotFile(file), {
    name: 'SnapshotError',
    code: 'SNAPSHOT_ERR_INVALID',
    file,
    message: `snapshot ${file} is invalid (1 problem):\n  languages: must name at least one language`
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

t.test('streamed in chunks of any size: the same model, the same errors as the document parsed whole', async t => {
  const { writeSnapshot: generate } = await import('../../../src/generate/write-snapshot.js')
  const dir = await tempDir(t)
  const file = join(dir, 'generated.json')
  await generate(file, { items: 3000, format: 'lines' })
  const raw = await readFile(file)
  // Every page the model can give, with its companies' pages, as text.
  const everything = (model: SnapshotModel): string[] => model.languages.flatMap(code => {
    const listing = model.language(code)!
    const all = listing.page(null, 0, listing.size)
    const pks = (JSON.parse(`[${all.items.toString()}]`) as SnapshotItem[]).map(item => item.pk)
    const companies = [...new Set((JSON.parse(raw.toString()) as { languages: Record<string, SnapshotItem[]> }).languages[code]!.flatMap(item => item.companies))]
    return [`${code} ${all.count} ${pks.join(',')} ${all.items.toString().length}`, ...companies.map(c => `${code}/${c} ${listing.page([c], 0, 10_000).items.toString()}`)]
  })
  const whole = parseSnapshot(raw, file, { whole: true })
  t.ok(raw.length > 3 * 4096, 'the file is many chunks long')
  for (const [readChunk, threads] of [[4096, 0], [4099, 0], [65536, 0], [4096, 2], [65536, 1]] as const) {
    const streamed = await loadSnapshotFile(file, { readChunk, threads })
    t.same(everything(streamed), everything(whole), `chunks and batches of ${readChunk} bytes, ${threads} parse threads`)
    t.equal(streamed.info.version, whole.info.version, 'the digest is of the same bytes')
  }

  // A bad file: up to WHOLE_REPORT_BYTES parsed whole for its report; larger, reported from the stream.
  const errorsOf = async (doc: SnapshotDoc | string | Buffer): Promise<{ whole: readonly string[], streamed: readonly string[] }> => {
    const bad = join(dir, 'bad.json')
    await writeFile(bad, typeof doc === 'string' || Buffer.isBuffer(doc) ? doc : JSON.stringify(doc))
    const problems = async (wholeReportBytes: number, threads = 0) => {
      const rejected = await loadSnapshotFile(bad, { readChunk: 4096, wholeReportBytes, threads }).then(() => null, (error: unknown) => error)
      t.type(rejected, SnapshotError)
      return (rejected as SnapshotError).problems
    }
    const streamed = await problems(0)
    t.same(await problems(0, 2), streamed, 'the same report from parse threads')
    return { whole: await problems(Infinity), streamed }
  }
  const items = Array.from({ length: 40 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: 'é'.repeat(200) }))
  const badLate = structuredClone(items)
  badLate[35]!.backdate = '2024-02-30'
  const late = await errorsOf({ languages: { en: badLate } })
  t.match(late.whole, [/^languages\.en\[35\]\.backdate: /])
  t.same(late.streamed, late.whole, 'an item\'s problem reads the same from the stream')
  const repeated = structuredClone(items)
  repeated[30]!.pk = 3
  const repeats = await errorsOf({ languages: { en: repeated } })
  t.same(repeats.whole, ['languages.en[30].pk: 3 repeats languages.en[2]'])
  t.same(repeats.streamed, repeats.whole)
  const cut = await errorsOf(JSON.stringify({ languages: { en: items } }).slice(0, -10))
  t.match(cut.whole, [/^not valid JSON: Unterminated string at line 1, column \d+$/])
  t.match(cut.streamed, [/^not a snapshot document: the document ends too early \(at byte \d+\)$/], 'a large file cut short: where it ends')
  const notText = await errorsOf(Buffer.concat([Buffer.from(`{"languages": {"en": [${JSON.stringify(items[0])}]}, "x": "`), Buffer.from([0xc3, 0xff]), Buffer.from('"}')]))
  t.same(notText.whole, ['the file is not valid UTF-8 text'])
  t.same(notText.streamed, notText.whole)
  const garbled = await errorsOf(`{"languages": {"en": [${JSON.stringify(items[0])}, {"pk": 2,,}]}}`)
  t.match(garbled.streamed, [/^languages\.en\[1\]: not valid JSON: .* of the item$/])
  // Members' problems keep their place among the items' (items go to the parser in batches; members do not).
  const badLast = structuredClone(items)
  badLast[39]!.backdate = '2024-13-01'
  const around = JSON.stringify({ x: 1, generated_at: 'yesterday', languages: { en: badLate, es: badLast }, y: 2 }).replace('"y":2', '"y":[1,]')
  const order = await errorsOf(around)
  t.match(order.streamed, [/^generated_at: /, /^languages\.en\[35\]\.backdate: /, /^languages\.es\[39\]\.backdate: /, /^y: not valid JSON: /])
})

t.test('a report read from the stream is the same whether items are taken as found or in batches', async t => {
  // Items go to the parser in batches and are taken later; what stops the read, and the other parts of the
  // document, must not change the report that taking each item as it was found gave.
  const dir = await tempDir(t)
  const item = (pk: number) => JSON.stringify(makeItem(pk, '2024-01-01', [1], { translated_abstract: 'x'.repeat(300) }))
  const problems = async (text: string | Buffer, options: { problemCap?: number } = {}) => {
    const file = join(dir, 'bad.json')
    await writeFile(file, text)
    const results = []
    for (const threads of [0, 2]) {
      const rejected = await loadSnapshotFile(file, { readChunk: 4096, wholeReportBytes: 0, threads, ...options }).then(() => null, (error: unknown) => error)
      t.type(rejected, SnapshotError)
      results.push((rejected as SnapshotError).problems)
    }
    t.same(results[1], results[0], 'the same from parse threads')
    return results[0]
  }
  const stop = '(stopped after 1 problems; fix these and check again)'
  // A full report, then a document that stops being followed: the report, not what stopped it.
  t.same(await problems('{"languages":{"en":[{"pk":1}]]}', { problemCap: 1 }), ['languages.en[0].is_translated: is required', stop])
  // A full report, then bytes that are not UTF-8 a chunk later: the report.
  const notText = Buffer.concat([Buffer.from(`{"languages":{"en":[{"pk":1},${Array.from({ length: 20 }, (_, i) => item(i + 2)).join(',')}],"x":"`), Buffer.from([0xff]), Buffer.from('"}}')])
  t.ok(notText.indexOf(0xff) > 4096, 'the bad byte a chunk later')
  t.same(await problems(notText, { problemCap: 1 }), ['languages.en[0].is_translated: is required', stop])
  // A bad language code after a repeated pk: the repeat is found, as the items before the code were taken.
  t.same(await problems(`{"languages":{"en":[${item(1)},${item(1)}],"x y":[]}}`), ['languages["x y"]: not a language code', 'languages.en[1].pk: 1 repeats languages.en[0]'])
})

t.test('a report cut at the cap says so even when the last errors only repeat a path', async t => {
  // A missing field is one line, though the schema reports it twice (required, then not a string).
  const { translated_title: _, ...untitled } = makeItem(1, '2024-01-01', [])
  const raw = Buffer.from(JSON.stringify({ languages: { en: [untitled] } }))
  let problems: readonly string[] = []
  try {
    parseSnapshot(raw, 'x.json', { whole: true, problemCap: 1 })
  } catch (error) {
    problems = (error as SnapshotError).problems
  }
  t.same(problems, ['languages.en[0].translated_title: is required', '(stopped after 1 problems; fix these and check again)'])
})
