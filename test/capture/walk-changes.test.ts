// A source that changes while it is walked: an item edited, an item added, counts that move. The capture
// keeps the content seen last, includes items found only on company pages, and reports all of it.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readCaptureOptions, type CaptureOptions } from '../../src/capture/capture-options.js'
import { formatSummary } from '../../src/capture/capture-summary.js'
import { runCapture } from '../../src/capture/run-capture.js'
import type { Snapshot } from '../../src/schemas/snapshot.js'
import { makeItem, smallSnapshot, tempDir } from '../helpers.js'
import { frontServer, listeningApp } from './capture-fixtures.js'

t.test('an edit and an insertion during the walk: the newer content kept, the new item included, both reported', async t => {
  const before = smallSnapshot()
  const after = smallSnapshot()
  // pk 9 (companies 7) gets a new title; pk 26, newest of all, appears for company 7.
  ;(after.languages.en as Array<Record<string, unknown>>)[8]!.translated_title = 'Item 9, corrected'
  after.languages.en!.push(makeItem(26, '2024-02-01', [7]))
  const { app: old } = await listeningApp(t, before)
  const { app: edited } = await listeningApp(t, after)
  // Unfiltered pages come from the old state until the first company page is asked for; from then on,
  // everything comes from the edited one.
  let switched = false
  const front = await frontServer(t, null, async (request, response) => {
    switched ||= request.url!.includes('companies=')
    const answer = await (switched ? edited : old).inject({ url: request.url!, headers: { host: request.headers.host! } })
    response.writeHead(answer.statusCode, answer.headers as Record<string, string>).end(answer.rawPayload)
    return true
  })
  const out = join(await tempDir(t), 'snapshot.jsonl')
  const options = await readCaptureOptions(['--from', front.url, '--languages', 'en,es,fr', '--companies', '7-9', '--out', out, '--page-size', '10']) as CaptureOptions
  const report = await runCapture(options, { signal: new AbortController().signal })

  const en = report.walk.languages[0]!
  t.same(en.changed, [9])
  t.same(en.onlyThroughCompanies, [26])
  t.same([en.countAtStart, en.countAtEnd], [25, 26])
  t.same(report.walk.countChanges, [{ language: 'en', company: null, from: 25, to: 26 }])
  const lines = (await readFile(out, 'utf8')).trimEnd().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
  const byPk = new Map(lines.slice(1).filter(line => line.language === 'en').map(line => [line.pk, line]))
  t.equal(byPk.get(9)?.translated_title, 'Item 9, corrected', 'the content seen last is kept')
  t.same(byPk.get(26)?.companies, [7], 'an item found only through a company page is kept, with its company')
  t.equal(byPk.size, 26)

  const summary = formatSummary(report)
  t.match(summary, '  items: en 26, es 2, fr 0 (28 in all; 1 only on company pages, not in the unfiltered listing: en 26)\n')
  t.match(summary, '  changed during the walk (walk again for a consistent snapshot):\n')
  t.match(summary, '    en: pk 9 served with other content on another page (the content seen last is kept)\n')
  t.match(summary, '    en: 25 items at the start, 26 at the end\n')
})

t.test('a listing that grows while its pages are walked is followed to its new end', async t => {
  // The first page comes from 25 items, every other request from 33 (eight new items on top, linked to
  // company 7): the later pages are shifted by eight, so the oldest items are pushed past the old end.
  const before = smallSnapshot()
  const after = smallSnapshot()
  for (let pk = 26; pk <= 33; pk++) after.languages.en!.push(makeItem(pk, `2024-02-${String(pk - 20).padStart(2, '0')}`, [7]))
  const { app: old } = await listeningApp(t, before)
  const { app: grown } = await listeningApp(t, after)
  const front = await frontServer(t, null, async (request, response) => {
    const first = request.url === '/en/api/internal/explore/?limit=10'
    const answer = await (first ? old : grown).inject({ url: request.url!, headers: { host: request.headers.host! } })
    response.writeHead(answer.statusCode, answer.headers as Record<string, string>).end(answer.rawPayload)
    return true
  })
  const out = join(await tempDir(t), 'snapshot.json')
  const options = await readCaptureOptions(['--from', front.url, '--languages', 'en', '--companies', '7', '--out', out, '--page-size', '10']) as CaptureOptions
  const report = await runCapture(options, { signal: new AbortController().signal })
  const en = report.walk.languages[0]!
  t.ok(front.seen.includes('/en/api/internal/explore/?limit=10&offset=30'), 'the page past the old end was asked for')
  t.equal(en.items.length, 33, 'the 25 old items, the oldest found past the old end, and the new ones through company 7')
  t.same(en.onlyThroughCompanies, [26, 27, 28, 29, 30, 31, 32, 33])
  t.same(report.walk.countChanges, [{ language: 'en', company: null, from: 25, to: 33 }])
  const doc = JSON.parse(await readFile(out, 'utf8')) as Snapshot
  t.same(doc.languages.en!.map(item => item.pk).slice(0, 10), [33, 32, 31, 30, 29, 28, 27, 26, 25, 20], 'written in the listing order')
})

t.test('pages that do not hold what the listing counts (an unstable order): nothing written, the reason said', async t => {
  const { app } = await listeningApp(t, smallSnapshot())
  // The second unfiltered page repeats the first: items tied on their sort key served in another order
  // from one request to the next would skip items the same way.
  const front = await frontServer(t, app, async (request, response) => {
    if (request.url!.includes('companies=') || !request.url!.includes('offset=10')) return false
    const answer = await app.inject({ url: request.url!.replace('offset=10', 'offset=0'), headers: { host: request.headers.host! } })
    response.writeHead(answer.statusCode, answer.headers as Record<string, string>).end(answer.rawPayload)
    return true
  })
  const out = join(await tempDir(t), 'snapshot.jsonl')
  const options = await readCaptureOptions(['--from', front.url, '--languages', 'en', '--companies', '7', '--out', out, '--page-size', '10']) as CaptureOptions
  await t.rejects(runCapture(options, { signal: new AbortController().signal }),
    { message: 'en: the listing counts 25 items but its pages held 15: its order is not stable from page to page, or it changed during the walk; nothing written, capture again' })
  await t.rejects(readFile(out), { code: 'ENOENT' }, 'nothing written')
})

t.test('a count no site has (a source that lies): "not an explore API" before a single further request', async t => {
  const { app } = await listeningApp(t, smallSnapshot())
  const front = await frontServer(t, app, async (request, response) => {
    const answer = await app.inject({ url: request.url!, headers: { host: request.headers.host! } })
    const page = JSON.parse(answer.body) as { count: number }
    page.count = 1e12
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page))
    return true
  })
  const out = join(await tempDir(t), 'snapshot.jsonl')
  const options = await readCaptureOptions(['--from', front.url, '--languages', 'en', '--companies', '7', '--out', out, '--page-size', '10']) as CaptureOptions
  await t.rejects(runCapture(options, { signal: new AbortController().signal }), { message: /not an explore API: .*a count of 1000000000000 items, more than 10000000 pages of 10/ })
  t.equal(front.seen.length, 1, 'one request: the first page')
})

t.test('a company\'s pages that do not hold what it counts: nothing written, the company named', async t => {
  const { app } = await listeningApp(t, smallSnapshot())
  // Company 7 has 8 items in en; its second page (offset 4) repeats its first, so four of its items would
  // be captured without company 7.
  const front = await frontServer(t, app, async (request, response) => {
    if (!request.url!.includes('companies=7') || !request.url!.includes('offset=4')) return false
    const answer = await app.inject({ url: request.url!.replace('offset=4', 'offset=0'), headers: { host: request.headers.host! } })
    response.writeHead(answer.statusCode, answer.headers as Record<string, string>).end(answer.rawPayload)
    return true
  })
  const out = join(await tempDir(t), 'snapshot.jsonl')
  const options = await readCaptureOptions(['--from', front.url, '--languages', 'en', '--companies', '7-8', '--out', out, '--page-size', '4']) as CaptureOptions
  await t.rejects(runCapture(options, { signal: new AbortController().signal }),
    { message: 'en, company 7: the listing counts 8 items but its pages held 4: its order is not stable from page to page, or it changed during the walk; nothing written, capture again' })
  await t.rejects(readFile(out), { code: 'ENOENT' }, 'nothing written')
})
