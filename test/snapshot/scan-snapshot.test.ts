import t from 'tap'
import fc from 'fast-check'
import { parseSnapshot } from '../../src/snapshot/load-snapshot.js'
import { scanSnapshot, scanSteps } from '../../src/snapshot/scan-snapshot.js'
import type { SnapshotModel } from '../../src/snapshot/snapshot-model.js'
import { makeItem } from '../helpers.js'

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

t.test('the scanner finds members, languages and item boundaries', async t => {
  const text = ' {"a": [1, {"b": "]}\\"["}], "languages": {"en": [ {"x": "}"} , 2 ], "es": []}, "z": null} '
  const seen: string[] = []
  t.ok(scanSnapshot(Buffer.from(text), 0, {
    member: (key, from, to) => seen.push(`member ${key} ${text.slice(from, to)}`),
    language: code => seen.push(`language ${code}`),
    item: (language, index, from, to) => seen.push(`item ${language}[${index}] ${text.slice(from, to)}`)
  }))
  t.same(seen, ['member a [1, {"b": "]}\\"["}]', 'language en', 'item en[0] {"x": "}"}', 'item en[1] 2', 'language es', 'member z null'])
})

t.test('the scanner gives up on what it does not expect', async t => {
  const noop = { member () {}, language () {}, item () {} }
  for (const text of ['', '[]', '{"languages": []}', '{"languages": {"en": {}}}', '{"a": 1} x', '{"a": 1, "a": 2}',
    '{"languages": {"en": [1 2]}}', '{"a": "unterminated}', '{"a" 1}', '{"languages": {"en": [}}', '{"a": }']) {
    t.notOk(scanSnapshot(Buffer.from(text), 0, noop), JSON.stringify(text))
  }
})

t.test('item by item and whole, a valid document gives the same model, however it is written', async t => {
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
    (languages, generatedAt, indent, languagesFirst) => {
      const body = Object.fromEntries(Object.entries(languages).map(([code, items]) => [code, items.map(i =>
        makeItem(i.pk, `2024-02-${String(i.day).padStart(2, '0')}`, i.companies, { translated_title: i.title, ...(i.extra === undefined ? {} : { extra: i.extra }) }))]))
      const doc = languagesFirst ? { languages: body, generated_at: generatedAt, other: [{ '"': '}' }] } : { generated_at: generatedAt, languages: body }
      const raw = Buffer.from(JSON.stringify(doc, null, indent))
      return served(parseSnapshot(raw, 'x.json')) === served(parseSnapshot(raw, 'x.json', { whole: true }))
    }
  ), { numRuns: 300 })
})

t.test('a valid document the scanner does not follow still loads (repeated keys: the last wins)', async t => {
  const raw = Buffer.from(`{"languages": {"en": [${JSON.stringify(makeItem(1, '2024-01-01', []))}]}, "languages": {"es": []}}`)
  t.same(parseSnapshot(raw, 'x.json').languages, ['es'])
})

t.test('the scan pauses every few thousand items, and its steps find what the whole scan finds', async t => {
  const items = Array.from({ length: 5000 }, (_, i) => ({ pk: i }))
  const raw = Buffer.from(JSON.stringify({ languages: { en: items, es: [] } }))
  const found: number[] = []
  const steps = scanSteps(raw, 0, { member () {}, language () {}, item (_language, index) { found.push(index) } })
  let pauses = 0
  let step = steps.next()
  while (step.done !== true) {
    pauses++
    step = steps.next()
  }
  t.equal(step.value, true)
  t.equal(found.length, 5000)
  t.ok(pauses >= 2, `${pauses} pauses for 5,000 items`)
})
