// docs/guides/demo-server.md for front-end tests, run for real: its worked example (a test that asks the request
// journal) as written, with Node's test runner and Chromium, against `node dist/server.js` and a small app; and the
// replay rule: two runs of a page loading 20 pages at once, on two fresh servers with CHAOS_SEED=7, meet the same
// trouble page for page.
import t, { type Test } from 'tap'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import type { Journal, JournalEntry } from '../src/schemas/request-journal.js'
import { BUILT_SERVER as SERVER, childEnv, CHROMIUM, CHROMIUM_ARGS, chromiumSkip, tempDir, watchOutput } from './helpers.js'

const ROOT = join(import.meta.dirname, '..')
const skip = chromiumSkip('the demo server guide\'s example')

const started = new Set<ChildProcess>()
t.teardown(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** `node dist/server.js` on a free port with `env`, once it serves; its API's origin. */
async function demoServer (t: Test, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [SERVER, '--port', '0'], {
    env: childEnv({ LOG_LEVEL: 'info', STATE_DIR: join(await tempDir(t), 'state'), ...env }), stdio: ['ignore', 'pipe', 'pipe']
  })
  started.add(child)
  t.teardown(() => { child.kill('SIGTERM') })
  const output = watchOutput(child)
  await output.logged(/"msg":"snapshot loaded"/)
  return await output.origin()
}

/** An app on its own origin: one page, whose script is `script` with API as the demo server's origin. */
async function app (t: Test, api: string, script: string): Promise<string> {
  const page = `<!doctype html><meta charset="utf-8"><title>News</title><ul id="news"></ul><script>const API = ${JSON.stringify(api)};\n${script}</script>`
  const server: Server = createServer((_request, response) => { response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close(); server.closeAllConnections() })
  return `http://localhost:${(server.address() as { port: number }).port}/`
}

// The app the guide's example is written for: company 3's latest items, or an alert when the API fails.
const NEWS_PAGE = `fetch(API + '/en/api/internal/explore/?companies=3&limit=5')
  .then(async response => {
    if (!response.ok) throw new Error('the API answered ' + response.status)
    for (const item of (await response.json()).results) {
      const li = document.createElement('li')
      li.textContent = item.translated_title
      document.getElementById('news').append(li)
    }
  })
  .catch(error => {
    const p = document.createElement('p')
    p.setAttribute('role', 'alert')
    p.textContent = 'The news could not be loaded: ' + error.message
    document.body.append(p)
  })`

/** The guide's section's one js block, as written. */
async function guideExample (): Promise<string> {
  const guide = await readFile(join(ROOT, 'docs', 'guides', 'demo-server.md'), 'utf8')
  const section = guide.slice(guide.indexOf('## A test that asks the journal'))
  const block = /```js\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 1)))
  if (block === null) throw new Error('no js block under "A test that asks the journal"')
  return block[1] as string
}

t.test('the guide\'s worked example passes as written: node --test and Chromium, against the real server and an app', { skip, timeout: 180_000 }, async t => {
  const api = await demoServer(t, { CHAOS: 'true' })
  const appUrl = await app(t, api, NEWS_PAGE)
  const dir = await tempDir(t)
  // Beside the project's node_modules, as in an app's checkout with playwright-core installed.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  const file = join(dir, 'news.journal.test.mjs')
  await writeFile(file, await guideExample())
  const { code, output } = await new Promise<{ code: number, output: string }>(resolve => {
    // TAP whatever the Node: from Node 23 the default reporter is `spec`, whose counts read differently.
    execFile(process.execPath, ['--test', '--test-reporter=tap', file], { cwd: dir, env: childEnv({ API_URL: api, APP_URL: appUrl, CHROMIUM }), timeout: 150_000 },
      (error, stdout, stderr) => { resolve({ code: error === null ? 0 : (error.code as number), output: stdout + stderr }) })
  })
  t.equal(code, 0, output)
  t.match(output, /# pass 2\n/, 'both of its tests ran and passed')
  t.match(output, /# fail 0\n/)
})

// 20 pages at once, as an app's page loads them; each page's status (or 'error': no answer) kept on the page.
const TWENTY_PAGES = `Promise.all(Array.from({ length: 20 }, (_, i) => fetch(API + '/en/api/internal/explore/?limit=2&offset=' + 2 * i)
  .then(response => response.status, () => 'error')))
  .then(statuses => { document.body.dataset.statuses = JSON.stringify(statuses) })`

let browser: Browser | null = null
t.before(async () => {
  if (skip === false) browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
})
t.teardown(async () => { await browser?.close() })

/** One CI run: a fresh server with CHAOS_SEED=7, the page loaded, what each of its 20 requests got and why. */
async function run (t: Test): Promise<{ statuses: Array<number | 'error'>, trouble: Map<string, JournalEntry['trouble']> }> {
  // Not `reset`: Chromium asks again, by itself, for a request reset on a connection it had used (the guide says so).
  const api = await demoServer(t, { CHAOS_SEED: '7', FAIL_RATE: '0.3', DELAY_MS: '0-60', FAULT: 'truncate', FAULT_RATE: '0.1' })
  const context = await (browser as Browser).newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  await page.goto(await app(t, api, TWENTY_PAGES))
  await page.locator('body[data-statuses]').waitFor({ state: 'attached', timeout: 60_000 })
  const statuses = JSON.parse(await page.locator('body').getAttribute('data-statuses') as string) as Array<number | 'error'>
  const { requests } = await (await fetch(`${api}/-/requests?path=/en/api/internal/explore/`)).json() as Journal
  t.equal(requests.length, 20, 'the journal has all 20')
  return { statuses, trouble: new Map(requests.map(entry => [entry.url as string, entry.trouble])) }
}

t.test('CHAOS_SEED=7: two runs of a page loading 20 pages at once give every page the same trouble', { skip, timeout: 180_000 }, async t => {
  const first = await run(t)
  const second = await run(t)
  t.same(second.statuses, first.statuses, `each page's answer the same: ${first.statuses.join(' ')}`)
  t.ok(first.statuses.includes(503) && first.statuses.includes(200), 'pages and failures both')
  t.same([...second.trouble].sort(), [...first.trouble].sort(), 'each request\'s trouble the same, as the journal says it')
  t.ok([...first.trouble.values()].every(trouble => trouble?.draw === 0), 'each page its first asking')
})
