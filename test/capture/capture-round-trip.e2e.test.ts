// A capture of the service itself, served again by a second app, answers every page as the first does:
// unfiltered and per company, at several limits and offsets, in JSON Lines and in format v1.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateSnapshot } from '../../src/generate/write-snapshot.js'
import type { Snapshot } from '../../src/schemas/snapshot.js'
import { runCapture } from '../../src/capture/run-capture.js'
import { readCaptureOptions, type CaptureOptions } from '../../src/capture/capture-options.js'
import { tempDir } from '../helpers.js'
import { compareAnswers, listeningApp, pagePaths, runCaptureCli } from './capture-fixtures.js'

// Several languages (one with a region, one empty), 12 companies, items with none; a source whose
// max limit (7) the capture must learn from its first page.
const SOURCE = generateSnapshot({ languages: { en: 150, es: 40, 'pt-br': 12, fr: 0 }, companies: 12, seed: 3 })
const MAX_LIMIT = 7
const COUNTS = Object.fromEntries(Object.entries(SOURCE.languages).map(([code, items]) => [code, items.length]))

/** The source's items as a capture must hold them: what is served, and every company (extra fields are never served). */
function expectedItems (doc: Snapshot): Record<string, Record<number, object>> {
  return Object.fromEntries(Object.entries(doc.languages).map(([code, items]) => [code, Object.fromEntries(items.map(item => {
    const { internal_note: _note, ...kept } = item as typeof item & { internal_note?: string }
    return [item.pk, kept]
  }))]))
}

function itemsOf (doc: Snapshot): Record<string, Record<number, object>> {
  return Object.fromEntries(Object.entries(doc.languages).map(([code, items]) => [code, Object.fromEntries(items.map(item => [item.pk, item]))]))
}

t.test('capture of the service into .jsonl (the command): the same items, companies and answers', async t => {
  const { url } = await listeningApp(t, SOURCE, { maxLimit: MAX_LIMIT })
  const out = join(await tempDir(t), 'capture.jsonl')
  const run = await runCaptureCli(['--from', url, '--languages', 'en,es,pt-br,fr', '--companies', '1-15', '--out', out, '--generated-at', '2026-11-20T10:00:00Z'])
  t.equal(run.code, 0, run.stderr)
  t.equal(run.stderr, '', 'no progress bar off a terminal, no message')
  t.match(run.stdout, `Captured ${url} into ${out} (JSON Lines, `)
  t.match(run.stdout, '  items: en 150, es 40, pt-br 12, fr 0 (202 in all)\n')
  t.match(run.stdout, '  page size: en 7, es 7, pt-br 7, fr (one page held all)\n', 'the clamp learned from the first page')
  t.match(run.stdout, '  companies: 15 listed, 3 with no item in any language (ids the source does not know?): 13-15\n', 'unknown ids listed, snapshot written anyway')
  t.match(run.stdout, /\n {2}requests: \d+, retries: 0\n/)
  t.match(run.stdout, '  changed during the walk: nothing\n')

  const lines = (await readFile(out, 'utf8')).trimEnd().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
  t.same(lines[0], { snapshot: 'explore', version: 1, generated_at: '2026-11-20T10:00:00Z', languages: ['en', 'es', 'pt-br', 'fr'] })
  const captured: Snapshot = { languages: { en: [], es: [], 'pt-br': [], fr: [] } }
  for (const { language, ...item } of lines.slice(1)) captured.languages[language as string]!.push(item as Snapshot['languages'][string][number])
  t.same(itemsOf(captured), expectedItems(SOURCE), 'every item, with exactly its companies')

  const { url: served } = await listeningApp(t, captured, { maxLimit: MAX_LIMIT })
  const { compared, differences } = await compareAnswers(url, served, pagePaths(COUNTS, [...Array.from({ length: 12 }, (_, i) => i + 1), 14], [1, 3, 7, 10]))
  t.same(differences, [], `${compared} pages byte for byte`)
})

t.test('capture of the service into .json with a page size asked for: the same answers', async t => {
  const { url } = await listeningApp(t, SOURCE, { maxLimit: MAX_LIMIT })
  const dir = await tempDir(t)
  const out = join(dir, 'capture.json')
  // The source is the test's own: no need of the default rate's politeness.
  const options = await readCaptureOptions(['--from', `${url}/`, '--languages', 'en,es,pt-br,fr', '--companies', '1-12', '--out', out, '--page-size', '5', '--concurrency', '3', '--rps', '0']) as CaptureOptions
  const report = await runCapture(options, { signal: new AbortController().signal })
  t.equal(report.format, 'pretty', 'a small capture is pretty-printed, as the generator writes it')
  t.same(report.walk.languages.map(l => [l.code, l.pageSize, l.items.length]), [['en', 5, 150], ['es', 5, 40], ['pt-br', 5, 12], ['fr', null, 0]])
  t.same(report.walk.emptyCompanies, [])
  const doc = JSON.parse(await readFile(out, 'utf8')) as Snapshot
  t.match(doc.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'generated_at: when the capture started')
  t.same(itemsOf(doc), expectedItems(SOURCE))

  const { url: served } = await listeningApp(t, doc, { maxLimit: MAX_LIMIT })
  const { compared, differences } = await compareAnswers(url, served, pagePaths(COUNTS, [1, 2, 5, 9, 12], [2, 5, 7, 100]))
  t.same(differences, [], `${compared} pages byte for byte`)
})
