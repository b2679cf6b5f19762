// The format v1 streamer: item boundaries found in bytes that arrive in chunks of any size, every byte still
// checked by JSON.parse, and a give-up (the loader then reports the file whole) on anything unexpected.
import t from 'tap'
import fc from 'fast-check'
import { parseSnapshot } from '../../../src/snapshot/load/load-snapshot.js'
import { DocumentStreamer, NotFollowed, type DocumentHandlers } from '../../../src/snapshot/load/stream-document.js'
import { Utf8Check } from '../../../src/snapshot/load/read-document.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { makeItem } from '../../helpers.js'

/** Everything a client could see of a model: every page of every language and company. */
function served (model: SnapshotModel): string {
  const out: string[] = []
  for (const code of model.languages) {
    const listing = model.language(code)!
    const page = listing.page(null, 0, 1_000_000)
    out.push(`${code} ${page.count} ${page.items.toString()}`)
    for (const company of [0, 1, 2, 3]) {
      const filtered = listing.page([company], 0, 1_000_000)
      out.push(`${code}/${company} ${filtered.count} ${filtered.items.toString()}`)
    }
  }
  return `${model.info.generatedAt} ${out.join('\n')}`
}

/** What the streamer reports for `text` fed in chunks of `size` bytes. */
function stream (text: string | Buffer, size: number): string[] {
  const seen: string[] = []
  const handlers: DocumentHandlers = {
    member: (key, value) => seen.push(`member ${key} ${value.toString()}`),
    language: code => seen.push(`language ${code}`),
    item: (language, index, bytes) => seen.push(`item ${language}[${index}] ${bytes.toString()}`)
  }
  const streamer = new DocumentStreamer(handlers)
  const raw = Buffer.isBuffer(text) ? text : Buffer.from(text)
  for (let at = 0; at < raw.length; at += size) streamer.feed(raw.subarray(at, at + size))
  streamer.end()
  return seen
}

t.test('the streamer finds members, languages and items, however the bytes are cut', async t => {
  const text = ' {"a": [1, {"b": "]}\\\\\\"["}], "languages": {"en": [ {"x": "}\\\\"} , 2, "é\\"" ], "es": []}, "z": null, "n": -1.5e3} '
  const expected = ['member a [1, {"b": "]}\\\\\\"["}]', 'language en', 'item en[0] {"x": "}\\\\"}', 'item en[1] 2', 'item en[2] "é\\""', 'language es', 'member z null', 'member n -1.5e3']
  for (let size = 1; size <= Buffer.byteLength(text); size++) {
    t.same(stream(text, size), expected, `chunks of ${size} bytes`)
  }
})

t.test('the streamer gives up on what it does not expect, whatever the chunks', async t => {
  for (const text of ['', '[]', '{"languages": []}', '{"languages": {"en": {}}}', '{"a": 1} x', '{"a": 1, "a": 2}',
    '{"languages": {"en": [1 2]}}', '{"a": "unterminated}', '{"a" 1}', '{"languages": {"en": [}}', '{"a": }', '{"a": 1',
    '{"languages": {"en": [], "en": []}}', '{"a": 1,}', '{,"a": 1}', '{"languages": {"en": [1,]}}', '{"languages": {"en": [1 , \n ]}}', '{"languages": {"en": [,1]}}',
    '{"languages": {"en": [ , ]}}', '{"languages": {"en": [{"pk": 1},,{"pk": 2}]}}', '{"languages": {"en": 5}}', '{"\\uzz": 1}', '{"languages": {"e\tn": []}}']) {
    for (const size of [1, 3, 1000]) {
      t.throws(() => stream(text, size), NotFollowed, `${JSON.stringify(text)} in chunks of ${size}`)
    }
  }
})

t.test('streamed and whole, a valid document gives the same model, however it is written', async t => {
  const item = fc.record({
    pk: fc.integer({ min: 1, max: 40 }),
    day: fc.integer({ min: 1, max: 28 }),
    companies: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
    title: fc.string({ unit: 'binary' }),
    extra: fc.option(fc.jsonValue(), { nil: undefined })
  })
  fc.assert(fc.property(
    fc.dictionary(fc.constantFrom('en', 'es', 'pt-br'), fc.uniqueArray(item, { selector: i => i.pk, maxLength: 12 }), { minKeys: 1 }),
    fc.option(fc.constant('2026-11-20T09:30:00Z'), { nil: undefined }),
    fc.integer({ min: 0, max: 4 }),
    fc.boolean(),
    fc.integer({ min: 1, max: 64 }),
    (languages, generatedAt, indent, languagesFirst, size) => {
      const body = Object.fromEntries(Object.entries(languages).map(([code, items]) => [code, items.map(i =>
        makeItem(i.pk, `2024-02-${String(i.day).padStart(2, '0')}`, i.companies, { translated_title: i.title, ...(i.extra === undefined ? {} : { extra: i.extra }) }))]))
      const doc = languagesFirst ? { languages: body, generated_at: generatedAt, other: [{ '"': '}' }] } : { generated_at: generatedAt, languages: body }
      const raw = Buffer.from(JSON.stringify(doc, null, indent))
      const items = stream(raw, size).filter(line => line.startsWith('item '))
      const whole = Object.entries(body).flatMap(([code, list]) => list.map((one, index) => `item ${code}[${index}] ${JSON.stringify(one, null, indent)}`))
      return items.length === whole.length && items.every((line, k) => JSON.stringify(JSON.parse(line.slice(line.indexOf(' ', 5) + 1))) === JSON.stringify(JSON.parse(whole[k]!.slice(whole[k]!.indexOf(' ', 5) + 1)))) &&
        served(parseSnapshot(raw, 'x.json')) === served(parseSnapshot(raw, 'x.json', { whole: true }))
    }
  ), { numRuns: 300 })
})

t.test('a key that is not a valid JSON string is a validation report, not an exception', async t => {
  t.throws(() => parseSnapshot(Buffer.from('{"\\uzz": 1, "languages": {}}'), 'x.json'), { code: 'SNAPSHOT_ERR_INVALID', problems: [/^not valid JSON: /] })
})

t.test('a valid document the streamer does not follow still loads (repeated keys: the last wins)', async t => {
  const raw = Buffer.from(`{"languages": {"en": [${JSON.stringify(makeItem(1, '2024-01-01', []))}]}, "languages": {"es": []}}`)
  t.same(parseSnapshot(raw, 'x.json').languages, ['es'])
})

t.test('UTF-8 is checked across chunk boundaries: a character cut anywhere is whole once joined', async t => {
  const text = Buffer.from('aé€𝄞b'.repeat(3))
  for (let size = 1; size <= text.length; size++) {
    const check = new Utf8Check()
    let ok = true
    for (let at = 0; at < text.length; at += size) ok &&= check.check(text.subarray(at, at + size))
    t.ok(ok && check.end(), `valid in chunks of ${size}`)
  }
  for (const bad of [Buffer.from([0x61, 0xff]), Buffer.from([0xe2, 0x82, 0x41]), Buffer.from([0x80]), Buffer.from([0xc3, 0xa9, 0xe2, 0x82])]) {
    for (let size = 1; size <= bad.length; size++) {
      const check = new Utf8Check()
      let ok = true
      for (let at = 0; at < bad.length; at += size) ok &&= check.check(bad.subarray(at, at + size))
      t.notOk(ok && check.end(), `${bad.toString('hex')} refused in chunks of ${size}`)
    }
  }
})
