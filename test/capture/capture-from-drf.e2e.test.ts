// A capture of the Django REST Framework reference (test/drf-reference/), served by the replica, answers
// as Django does: the capture learns DRF's clamp, its companies and every item, byte for byte. Skipped
// where Debian's python3-django and python3-djangorestframework are not installed.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Snapshot } from '../../src/schemas/snapshot.js'
import { freePort, tempDir } from '../helpers.js'
import { differences, fetchAnswers, listeningApp, pagePaths, runCaptureCli } from './capture-fixtures.js'

// Debian's python, not a pyenv one found first on PATH: only it has Django.
const PYTHON = '/usr/bin/python3'
const REFERENCE = join(import.meta.dirname, '..', 'drf-reference')
const django = spawnSync(PYTHON, ['-c', 'import django, rest_framework'], { stdio: 'ignore' }).status === 0
const MAX_LIMIT = 20

t.test('capture of the DRF reference: served again, the same answers as Django', {
  skip: django ? false : 'Django and DRF are not installed (apt-get install python3-djangorestframework python3-django)'
}, async t => {
  const dir = await tempDir(t)
  const fixture = join(dir, 'fixture.json')
  t.equal(spawnSync(PYTHON, [join(REFERENCE, 'gen_fixture.py'), fixture]).status, 0, 'fixture written')
  const source = JSON.parse(await readFile(fixture, 'utf8')) as Snapshot
  const port = await freePort()
  const server = spawn(PYTHON, [join(REFERENCE, 'serve.py'), '--snapshot', fixture, '--port', String(port), '--quiet', '--max-limit', String(MAX_LIMIT)], { stdio: ['ignore', 'ignore', 'pipe'] })
  t.teardown(() => { server.kill() })
  let banner = ''
  while (!banner.includes('listening on')) {
    const [chunk] = await Promise.race([once(server.stderr, 'data'), once(server, 'exit').then(() => { throw new Error(`serve.py ended: ${banner}`) })]) as [Buffer]
    banner += chunk.toString()
  }
  const url = `http://127.0.0.1:${port}`

  const companies = [...new Set(Object.values(source.languages).flatMap(items => items.flatMap(item => item.companies)))]
  const ids = join(dir, 'companies.txt')
  await writeFile(ids, `# every company of the fixture, and one Django does not know\n${companies.join('\n')}\n424242\n`)
  const out = join(dir, 'capture.jsonl')
  const run = await runCaptureCli(['--from', url, '--languages', Object.keys(source.languages).join(','), '--companies', `@${ids}`, '--out', out])
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, '  items: en 57, es 3, pt-br 12, fr 0 (72 in all)\n')
  t.match(run.stdout, `  page size: en ${MAX_LIMIT}, es (one page held all)`)
  t.match(run.stdout, `  companies: ${companies.length + 1} listed, 1 with no item in any language (ids the source does not know?): 424242\n`)

  const captured: Snapshot = { languages: Object.fromEntries(Object.keys(source.languages).map(code => [code, []])) }
  for (const line of (await readFile(out, 'utf8')).trimEnd().split('\n').slice(1)) {
    const { language, ...item } = JSON.parse(line) as { language: string } & Snapshot['languages'][string][number]
    captured.languages[language]!.push(item)
  }
  for (const [code, items] of Object.entries(source.languages)) {
    // The fixture links one item to company 12 twice: a capture lists each company once.
    const expected = Object.fromEntries(items.map(item => [item.pk, [...new Set(item.companies)].sort((a, b) => a - b)]))
    t.same(Object.fromEntries(captured.languages[code]!.map(item => [item.pk, item.companies])), expected, `${code}: every item with its companies`)
  }

  // Three servers: Django, the replica on the capture, the replica on the fixture itself. The capture is
  // faithful when the two replicas answer alike byte for byte, and Django's answers hold the same JSON.
  // (Bytes differ from Django's where the replica's own serializer does: it writes nested objects in its
  // schema's key order, and the fixture stores display_image keys in another one.)
  const { url: fromCapture } = await listeningApp(t, captured, { maxLimit: MAX_LIMIT })
  const { url: fromFixture } = await listeningApp(t, source, { maxLimit: MAX_LIMIT })
  const counts = Object.fromEntries(Object.entries(source.languages).map(([code, items]) => [code, items.length]))
  const paths = [...pagePaths(counts, [...companies, 424242], [1, 10, 20, 100])]
  const [reference, replayed, direct] = await Promise.all([url, fromCapture, fromFixture].map(async base => await fetchAnswers(base, paths)))
  t.same(differences(paths, direct!, replayed!), [], `${paths.length} pages: the capture served as the fixture is, byte for byte`)
  const parse = (answer: string): unknown => [answer.slice(0, 3), JSON.parse(answer.slice(4))]
  const unlike = paths.filter((_, i) => !sameJson(parse(reference![i]!), parse(replayed![i]!)))
  t.same(unlike, [], `${paths.length} pages: the same status and JSON as Django`)
  t.comment(`${differences(paths, reference!, direct!).length} of ${paths.length} pages differ from Django's in bytes only, for the replica serving the fixture itself`)
})

/** Deep equality of parsed JSON, key order aside. */
function sameJson (a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every(key => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}
