// The console at /-/ through inject: what it shows, that every value from a snapshot or a refused file is
// escaped, its headers, and that it leaves the service's other answers alone.
import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { CONTENT_SECURITY_POLICY } from '../../src/console/console-route.js'
import { buildTestApp, EXPLORE, smallSnapshot, testStateDir, writeSnapshot, reloadFile } from '../helpers.js'

const XSS = '<script>alert(1)</script>'

/** Saves a file the validator refuses, naming `label` in its problem, and reloads it. */
async function refuse (t: Test, app: FastifyInstance, label: string): Promise<void> {
  // A language key must be a path segment (en, pt-br): anything else is refused, and quoted in the problem.
  await writeFile(app.snapshots.file, JSON.stringify({ languages: { [label]: [] } }))
  t.equal(await reloadFile(app), 'failed', `${label} refused`)
}

async function page (app: FastifyInstance, url = '/-/'): Promise<string> {
  const res = await app.inject(url)
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`)
  return res.body
}

/** Every element console-page.ts writes; data must never add one (<img> is only ever made by the script). */
const PAGE_TAGS = new Set(['html', 'head', 'meta', 'title', 'link', 'script', 'body', 'header', 'h1', 'h2', 'h3', 'span', 'nav',
  'ul', 'ol', 'li', 'a', 'main', 'section', 'div', 'p', 'time', 'dl', 'dt', 'dd', 'code', 'kbd', 'table', 'caption', 'thead',
  'tbody', 'tr', 'th', 'td', 'form', 'label', 'select', 'option', 'input', 'button', 'noscript', 'footer'])

/** The tags in a page that the page's own markup does not write, and how many <script>s it has (1). */
function foreignMarkup (markup: string): { foreign: string[], scripts: number } {
  const names = [...markup.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map(match => (match[1] as string).toLowerCase())
  return { foreign: names.filter(name => !PAGE_TAGS.has(name)), scripts: names.filter(name => name === 'script').length / 2 }
}

t.test('GET /-/ shows the served snapshot: file, version, generated_at, loaded, items per language', async t => {
  const app = await buildTestApp(t)
  const status = JSON.parse((await app.inject('/-/status')).body)
  const res = await app.inject('/-/')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.match(res.body, /^<!doctype html>/)
  t.match(res.body, `<code>${status.path}</code>`, 'the file')
  t.match(res.body, `<code id="served-version">${status.snapshot.version}</code>`, 'the version')
  t.match(res.body, '<dd id="served-generated-at">2026-11-20T09:30:00Z</dd>', 'generated_at')
  t.match(res.body, `<time datetime="${status.snapshot.loadedAt}">`, 'when it was loaded')
  for (const [language, count] of [['en', 25], ['es', 2], ['fr', 0]] as const) {
    t.match(res.body, `<tr><th scope="row"><code>${language}</code></th><td class="number">${count}</td>`, `${count} items in ${language}`)
  }
  t.match(res.body, '<p id="no-refusals">No file has been refused since the service started.</p>')
  t.match(res.body, '<select name="lang"><option value="en" selected>en (25 items)</option>', 'the preview offers the languages served')
  t.notMatch(res.body, /<section id="workers"/, 'one process: no table of workers')
})

t.test('the console\'s answers carry a strict CSP, nosniff and no-referrer; no inline script or style', async t => {
  const app = await buildTestApp(t)
  t.equal(CONTENT_SECURITY_POLICY, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
  for (const url of ['/-/', '/-/console.js', '/-/console.css']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-security-policy'], CONTENT_SECURITY_POLICY, `${url}: CSP`)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: nosniff`)
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${url}: referrer`)
  }
  const { body, headers } = await app.inject('/-/')
  t.equal(headers['cache-control'], 'no-store', 'live facts are never cached')
  // The CSP allows neither: a script or style element must name a file, and no element has a style.
  t.same([...body.matchAll(/<script\b[^>]*>/g)].map(m => m[0]), [`<script type="module" src="${/src="(\/-\/console\.js\?v=[^"]+)"/.exec(body)?.[1]}">`], 'one script, the console\'s own file')
  t.notMatch(body, /<style\b|\sstyle=|\son[a-z]+=/i, 'no inline style, style attribute or event handler')
})

t.test('the script and stylesheet: versioned URLs cached for a year, others revalidated, 304 on a match', async t => {
  const app = await buildTestApp(t)
  const body = await page(app)
  for (const [path, type] of [['/-/console.js', 'text/javascript; charset=utf-8'], ['/-/console.css', 'text/css; charset=utf-8']] as const) {
    const linked = new RegExp(`"(${path.replace('.', '\\.')}\\?v=[A-Za-z0-9_-]+)"`).exec(body)?.[1] as string
    t.ok(linked, `the page links ${path} with its version`)
    const current = await app.inject(linked)
    t.equal(current.headers['content-type'], type)
    t.equal(current.headers['cache-control'], 'public, max-age=31536000, immutable', `${linked}: kept`)
    const etag = current.headers.etag as string
    t.equal(etag, `"${linked.split('=')[1]}"`, 'the ETag is the version')
    t.equal((await app.inject(path)).headers['cache-control'], 'no-cache', `${path} without a version is revalidated`)
    t.equal((await app.inject(`${path}?v=old`)).headers['cache-control'], 'no-cache', 'an old version too')
    const revalidated = await app.inject({ url: path, headers: { 'if-none-match': `W/${etag}` } })
    t.equal(revalidated.statusCode, 304)
    t.equal(revalidated.body, '')
  }
})

t.test('HEAD /-/: GET\'s status and headers, no body', async t => {
  const app = await buildTestApp(t)
  const get = await app.inject('/-/')
  const head = await app.inject({ method: 'HEAD', url: '/-/' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  for (const name of ['content-type', 'content-length', 'content-security-policy', 'cache-control']) t.equal(head.headers[name], get.headers[name], name)
})

t.test('other methods on /-/ get what they get on /-/status; other /-/ paths and the API\'s 404s are untouched', async t => {
  const app = await buildTestApp(t)
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
    const console = await app.inject({ method, url: '/-/' })
    const status = await app.inject({ method, url: '/-/status' })
    t.equal(console.statusCode, status.statusCode, `${method}: ${status.statusCode}`)
    t.equal(console.body, status.body, `${method}: the same body`)
  }
  for (const url of ['/-/nothing', '/-/console', '/-/console.js/x', '/-', '/xx/api/internal/explore/', '/en/api/internal/nothing/']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.same(JSON.parse(res.body), { detail: 'Not found.' }, url)
  }
  const slashless = await app.inject('/en/api/internal/explore?companies=7')
  t.equal(slashless.statusCode, 301, 'the explore path without its slash still redirects')
  t.equal((await app.inject(`${EXPLORE}?companies=7`)).statusCode, 200)
})

t.test('CONSOLE=false: /-/ and its files are the 404 of any unknown path', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { console: false })
  const unknown = await app.inject('/-/nothing')
  for (const url of ['/-/', '/-/console.js', '/-/console.css']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.equal(res.body, unknown.body, url)
    t.equal(res.headers['content-type'], unknown.headers['content-type'], url)
  }
  t.equal((await app.inject('/-/status')).statusCode, 200, 'the status stays')
})

t.test('links to /-/status always, and to /-/docs and /-/metrics only when they are served', async t => {
  const all = await page(await buildTestApp(t))
  for (const href of ['/-/status', '/-/docs', '/-/metrics']) t.match(all, `<a href="${href}">`, href)
  const bare = await page(await buildTestApp(t, smallSnapshot(), { docs: false, metrics: false }))
  t.match(bare, '<a href="/-/status">')
  t.notMatch(bare, '/-/docs')
  t.notMatch(bare, '/-/metrics')
})

t.test('a refused file: its problems, escaped, and what the editor should do next', async t => {
  const app = await buildTestApp(t)
  const { version } = JSON.parse((await app.inject('/-/status')).body).snapshot
  await refuse(t, app, XSS)
  const status = JSON.parse((await app.inject('/-/status')).body)
  const problem = `snapshot.json:1:15: languages["${XSS}"]: is not a language segment (expected ^[a-z]{2}(-[a-z]{2,4})?$, e.g. en or pt-br)`
  t.same(status.reloads.recentFailures, [{ at: status.reloads.lastFailure.at, file: app.snapshots.file, reason: 'invalid', problems: [problem] }])
  const body = await page(app)
  t.notMatch(body, XSS, 'the problem is not markup')
  t.match(body, '<code>snapshot.json:1:15: languages[&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;]: is not a language segment', 'it is text')
  t.match(body, 'role="alert">The newest file was refused')
  t.match(body, `<dt>Stale since</dt><dd class="bad-text"><time datetime="${status.reloads.staleSince}">`)
  t.match(body, `The service keeps serving version <code>${version}</code> (<code>generated_at</code> 2026-11-20T09:30:00Z), loaded`)
  t.match(body, `Fix the file and save it again; check it first with <kbd>npx explore-replica check ${app.snapshots.file}</kbd>.`)
  t.match(body, 'The service refused this file with 1 problem.')
  t.match(body, '<span class="badge">not fixed yet</span>')
  t.same(foreignMarkup(body), { foreign: [], scripts: 1 }, 'no element or script beyond the page\'s own')

  await writeFile(app.snapshots.file, JSON.stringify(smallSnapshot()))
  t.equal(await reloadFile(app), 'loaded')
  const fixed = await page(app)
  t.match(fixed, 'role="status">Serving the newest file.')
  t.notMatch(fixed, 'id="next-step"', 'nothing left to do')
  t.match(fixed, '<span class="badge">fixed since: a later file was served</span>', 'the refusal stays in the history')
  t.match(fixed, /<dt>Last successful reload<\/dt><dd><time /)
})

t.test('a file name with markup in it is escaped everywhere it appears', async t => {
  // A file name cannot hold a slash, so no closing tag: an element with a handler is as bad.
  const name = '"<img src=x onerror=alert(1)>\'.json'
  const file = await writeSnapshot(t, smallSnapshot(), name)
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: testStateDir(file), watch: false } }))
  t.teardown(() => app.close())
  await app.snapshots.start()
  await refuse(t, app, 'english')
  const body = await page(app)
  const escaped = `${dirname(file)}/&quot;&lt;img src=x onerror=alert(1)&gt;&#39;.json`
  t.notMatch(body, '<img', 'no image element from the name')
  t.match(body, `<dt>File</dt><dd><code>${escaped}</code></dd>`, 'the path is text')
  t.match(body, `: <code>${escaped}</code>`, 'in the refusal too')
  t.match(body, `npx explore-replica check ${escaped}</kbd>`, 'and in the advice')
  t.same(foreignMarkup(body), { foreign: [], scripts: 1 }, 'no element or script beyond the page\'s own')
})

t.test('the refusal history: the last 10 refusals, newest first', async t => {
  const app = await buildTestApp(t)
  for (let i = 1; i <= 12; i++) await refuse(t, app, `bad${i}`)
  const status = JSON.parse((await app.inject('/-/status')).body)
  const labels = status.reloads.recentFailures.map((f: { problems: string[] }) => /languages\.(bad\d+)/.exec(f.problems[0] as string)?.[1])
  t.same(labels, ['bad12', 'bad11', 'bad10', 'bad9', 'bad8', 'bad7', 'bad6', 'bad5', 'bad4', 'bad3'], '/-/status: 10, newest first')
  t.same(status.reloads.recentFailures[0], { at: status.reloads.lastFailure.at, file: app.snapshots.file, reason: 'invalid', problems: status.reloads.lastFailure.problems }, 'the newest is lastFailure')
  t.match(status.reloads, { failed: 12, failedInARow: 12 })
  const body = await page(app)
  t.match(body, '(the last 10, newest first)')
  const shown = [...body.matchAll(/<li><code>snapshot\.json:\d+:\d+: languages\.(bad\d+):/g)].map(m => m[1])
  t.same(shown, labels, 'the page lists the same 10 in the same order')
  t.equal([...body.matchAll(/<li class="refusal current">/g)].length, 10, 'all still unfixed')
})

t.test('the preview form keeps its values from the query and has a no-JavaScript link to the API', async t => {
  const app = await buildTestApp(t)
  const body = await page(app, '/-/?lang=es&companies=7,%208&limit=5&offset=2')
  t.match(body, '<option value="es" selected>es (2 items)</option>')
  t.match(body, '<input name="companies" value="7, 8"')
  t.match(body, '<input name="limit" type="number" min="1" value="5">')
  t.match(body, '<a href="/es/api/internal/explore/?companies=7&amp;companies=8&amp;limit=5&amp;offset=2">')
  const unknown = await page(app, '/-/?lang=zz&limit=abc')
  t.match(unknown, '<option value="en" selected>', 'an unknown language falls back to en')
  t.match(unknown, 'value="10">', 'a bad limit falls back to 10')
})

t.test('the request journal\'s section: shown when the journal is on, to be filled by the script; absent when off', async t => {
  const on = await page(await buildTestApp(t))
  t.match(on, '<section id="requests" aria-labelledby="requests-title">')
  t.match(on, '<tbody id="requests-rows"></tbody>')
  t.match(on, '<a href="/-/requests">/-/requests</a>')
  t.notMatch(await page(await buildTestApp(t, smallSnapshot(), { requestJournal: false })), 'id="requests"')
})
