// The console at /-/ in a real headless Chromium, under its own Content-Security-Policy: the status, the
// preview's company filter and pages (checked against what the API answers), and a refused file showing
// up after a bad save to a watched snapshot.
import { once } from 'node:events'
import { rename, writeFile } from 'node:fs/promises'
import t, { type Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import type { ReloadOutcome } from '../../src/snapshot/store/snapshot-store.js'
import { buildTestApp, CHROMIUM, CHROMIUM_ARGS, chromiumSkip, makeItem, smallSnapshot, type SnapshotDoc } from '../helpers.js'

const skip = chromiumSkip('the console')
const IMAGE = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="450"><rect width="800" height="450" fill="#6b8cce"/></svg>')}`

/** smallSnapshot, with an image, an abstract, a story and a translation on every fourth `en` item. */
function richSnapshot (): SnapshotDoc {
  const doc = smallSnapshot()
  doc.languages.en = (doc.languages.en as Array<ReturnType<typeof makeItem>>).map(item => item.pk % 4 !== 0
    ? item
    : {
        ...item,
        display_image: { url: IMAGE, width: 800, height: 450 },
        translated_abstract: `Abstract of item ${item.pk}`,
        stories: [{ translated_title: `Story of ${item.pk}`, translated_url: `/en/stories/story-${item.pk}/` }],
        translated_languages: [{ language_code: 'fr', language: 'Français', url: `/fr/latest-news/item-${item.pk}/` }]
      })
  return doc
}

interface Opened {
  page: Page
  /** Everything the page said on its console, and its uncaught errors: CSP violations land here. */
  said: string[]
  dialogs: string[]
}

let browser: Browser | null = null
t.before(async () => {
  if (skip === false) browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
})
t.teardown(async () => { await browser?.close() })

async function served (t: Test): Promise<{ app: FastifyInstance, origin: string }> {
  // Watched, as a service is: the refusal test saves a bad file over it.
  const app = await buildTestApp(t, richSnapshot(), { watch: true, reloadDebounceMs: 20 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return { app, origin: `http://127.0.0.1:${port}` }
}

async function open (t: Test, url: string, javaScriptEnabled = true): Promise<Opened> {
  const context = await (browser as Browser).newContext({ javaScriptEnabled })
  t.teardown(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(30_000)
  const opened: Opened = { page, said: [], dialogs: [] }
  page.on('console', message => opened.said.push(`${message.type()}: ${message.text()}`))
  page.on('pageerror', error => opened.said.push(`pageerror: ${error.message}`))
  page.on('dialog', dialog => {
    opened.dialogs.push(dialog.message())
    dialog.dismiss().catch(() => {})
  })
  if (javaScriptEnabled) await preview(page, () => page.goto(url))
  else await page.goto(url)
  return opened
}

/** Does `action`, then waits for the API's answer it causes and for the cards drawn from it; its URL. */
async function preview (page: Page, action: () => Promise<unknown>): Promise<string> {
  const [response] = await Promise.all([page.waitForResponse(r => r.url().includes('/api/internal/explore/')), action()])
  // aria-busy is set before the request and removed once its cards are in.
  await page.locator('#preview-cards:not([aria-busy])').waitFor({ state: 'attached' })
  return new URL(response.url()).pathname + new URL(response.url()).search
}

async function titles (page: Page): Promise<string[]> {
  return await page.locator('#preview-cards .card-title').allTextContents()
}

async function apiTitles (app: FastifyInstance, url: string): Promise<string[]> {
  const body = JSON.parse((await app.inject(url)).body) as { results: Array<{ translated_title: string }> }
  return body.results.map(item => item.translated_title)
}

function quiet (t: Test, { said, dialogs }: Opened): void {
  t.same(said.filter(line => /^(error|warning|pageerror)|Content Security Policy/i.test(line)), [], 'no CSP violation, error or warning on the page\'s console')
  t.same(dialogs, [], 'no dialog opened')
}

t.test('the status shows: version, generated_at, items per language, and the first page of cards', { skip }, async t => {
  const { app, origin } = await served(t)
  const status = JSON.parse((await app.inject('/-/status')).body)
  const opened = await open(t, `${origin}/-/`)
  const { page } = opened
  t.equal(await page.locator('#served-version').textContent(), status.snapshot.version)
  t.equal(await page.locator('#served-generated-at').textContent(), '2026-11-20T09:30:00Z')
  t.same(await page.locator('#items-per-language tbody tr').evaluateAll(rows => rows.map(row => [row.children[0]?.textContent, row.children[1]?.textContent])),
    [['en', '25'], ['es', '2'], ['fr', '0']])
  t.match(await page.locator('.banner').textContent(), 'Serving the newest file.')
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?limit=10'), 'every en item, first page')
  t.match(await page.locator('#preview-summary').textContent(), 'Items 1–10 of 25 in /en/ for every company.')
  quiet(t, opened)
})

t.test('choosing a company filters the cards to what the API answers for it; each card links its raw JSON', { skip }, async t => {
  const { app, origin } = await served(t)
  const opened = await open(t, `${origin}/-/`)
  const { page } = opened
  await page.locator('input[name="companies"]').fill('7')
  const asked = await preview(page, () => page.getByRole('button', { name: 'Show' }).click())
  t.equal(asked, '/en/api/internal/explore/?companies=7&limit=10&offset=0')
  const expected = await apiTitles(app, '/en/api/internal/explore/?companies=7&limit=10')
  t.equal(expected.length, 8, 'company 7 has 8 items')
  t.same(await titles(page), expected, 'the cards are the API\'s items for company 7, in its order')
  t.match(await page.locator('#preview-summary').textContent(), 'Items 1–8 of 8 in /en/ for company 7.')
  t.match(page.url(), /\/-\/\?lang=en&companies=7&limit=10&offset=0$/, 'the page\'s URL keeps the choice')

  const cards = page.locator('#preview-cards .card')
  for (let i = 0; i < await cards.count(); i++) {
    const card = cards.nth(i)
    const raw = new URL(await card.locator('.raw a').getAttribute('href') as string)
    t.equal(raw.pathname + raw.search, `/en/api/internal/explore/?companies=7&limit=1&offset=${i}`)
    const [item] = JSON.parse((await app.inject(raw.pathname + raw.search)).body).results
    t.equal(String(item.pk), await card.getAttribute('data-pk'), `card ${i}'s raw JSON is its item`)
  }

  // Item 12 (company 7): every field a card shows.
  const card = page.locator('.card[data-pk="12"]')
  t.equal(await card.locator('.card-title a').getAttribute('href'), `${origin}/en/latest-news/item-12/`)
  t.equal(await card.locator('.card-meta').textContent(), 'Article · 2024-01-02 · pk 12')
  t.equal(await card.locator('img').getAttribute('src'), IMAGE)
  // This program has no DOM types: the two properties of an HTMLImageElement that say it loaded.
  const loaded = await card.locator('img').evaluate(img => { const { complete, naturalWidth } = img as unknown as { complete: boolean, naturalWidth: number }; return complete && naturalWidth === 800 })
  t.ok(loaded, 'the image loaded (img-src allows it)')
  t.equal(await card.locator('.abstract').textContent(), 'Abstract of item 12')
  t.equal(await card.locator('.stories').textContent(), 'Stories: Story of 12')
  t.equal(await card.locator('.translations a').getAttribute('hreflang'), 'fr')
  t.equal(await card.locator('.translations').textContent(), 'Translations: Français (fr)')

  await page.locator('input[name="companies"]').fill('7, 9')
  t.equal(await preview(page, () => page.getByRole('button', { name: 'Show' }).click()), '/en/api/internal/explore/?companies=7&companies=9&limit=10&offset=0')
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?companies=7&companies=9&limit=10'), 'two companies: their union')
  t.match(await page.locator('#preview-summary').textContent(), 'for companies 7, 9.')

  await page.locator('input[name="companies"]').fill('seven')
  await preview(page, () => page.getByRole('button', { name: 'Show' }).click())
  t.equal(await page.locator('#preview-summary').textContent(), 'The API answered 400: companies: Enter a whole number.')
  t.equal(await page.locator('#preview-cards .card').count(), 0)
  // The API's 400 is a failed fetch in Chromium's eyes: its console line is the only one expected.
  opened.said = opened.said.filter(line => !/status of 400/.test(line))
  quiet(t, opened)
})

t.test('Next shows the cards at offset + limit, following the API\'s next link; Previous comes back', { skip }, async t => {
  const { app, origin } = await served(t)
  const opened = await open(t, `${origin}/-/?lang=en&companies=7&limit=3`)
  const { page } = opened
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?companies=7&limit=3'), 'the page given in the console\'s URL')
  t.ok(await page.locator('#preview-previous').isDisabled(), 'no previous page')

  t.equal(await preview(page, () => page.getByRole('button', { name: 'Next →' }).click()), '/en/api/internal/explore/?companies=7&limit=3&offset=3')
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?companies=7&limit=3&offset=3'), 'items 4–6')
  t.match(await page.locator('#preview-summary').textContent(), 'Items 4–6 of 8')
  t.equal(await page.locator('#preview-cards .card').first().locator('.raw a').textContent(), 'Raw JSON (item 4)')

  t.equal(await preview(page, () => page.getByRole('button', { name: 'Next →' }).click()), '/en/api/internal/explore/?companies=7&limit=3&offset=6')
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?companies=7&limit=3&offset=6'), 'items 7–8')
  t.ok(await page.locator('#preview-next').isDisabled(), 'the last page')

  t.equal(await preview(page, () => page.getByRole('button', { name: '← Previous' }).click()), '/en/api/internal/explore/?companies=7&limit=3&offset=3')
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?companies=7&limit=3&offset=3'))
  t.equal(await preview(page, () => page.goBack()), '/en/api/internal/explore/?companies=7&limit=3&offset=6', 'the browser\'s Back returns to the page before')
  quiet(t, opened)
})

t.test('a bad save of the watched file: the refusal and what to do appear on the page, escaped, also without JavaScript', { skip }, async t => {
  const { app, origin } = await served(t)
  const opened = await open(t, `${origin}/-/`)
  const { page } = opened
  t.equal(await page.locator('#refusals').count(), 0)

  // The watcher reloads the file itself. Saved whole (written aside, renamed over): a save in place paused past the
  // watcher's quiet time on a loaded machine is first refused empty, another problem than this test's.
  const outcomes: ReloadOutcome[] = []
  const refused = (async () => {
    while (outcomes.at(-1) !== 'failed') outcomes.push((await once(app.snapshots, 'reloaded'))[0] as ReloadOutcome)
  })()
  const aside = `${app.snapshots.file}.saving`
  await writeFile(aside, JSON.stringify({ generated_at: '2026-11-21T08:00:00Z', languages: { '<script>alert(1)</script>': [] } }))
  await rename(aside, app.snapshots.file)
  await refused
  t.equal(outcomes.at(-1), 'failed', `reloads: ${outcomes.join(', ')}`)

  await preview(page, () => page.reload())
  const problem = 'snapshot.json:1:53: languages["<script>alert(1)</script>"]: is not a language segment (expected ^[a-z]{2}(-[a-z]{2,4})?$, e.g. en or pt-br)'
  t.same(await page.locator('#refusals .problems li').allTextContents(), [problem], 'the problem, as text')
  t.match((await page.locator('#refusals .refusal-head').allTextContents()).join(''), app.snapshots.file, 'the file refused')
  t.match(await page.locator('.banner').textContent(), /The newest file was refused:\s+1 failed reload in a row, stale since/)
  const advice = await page.locator('#next-step').textContent()
  t.match(advice, `The service keeps serving version ${app.snapshots.current()?.info.version}`)
  t.match(advice, `Fix the file and save it again; check it first with npx explore-replica check ${app.snapshots.file}.`)
  t.same(await titles(page), await apiTitles(app, '/en/api/internal/explore/?limit=10'), 'the preview still shows the last good snapshot')
  quiet(t, opened)

  const plain = await open(t, `${origin}/-/`, false)
  t.same(await plain.page.locator('#refusals .problems li').allTextContents(), [problem], 'without JavaScript too')
  t.equal(await plain.page.locator('noscript a').getAttribute('href'), '/en/api/internal/explore/?limit=10&offset=0', 'the preview points at the API instead')
  t.ok(await plain.page.locator('#preview-next').isHidden(), 'no pager without JavaScript')
  t.equal(await plain.page.locator('#preview-cards .card').count(), 0, 'no cards without JavaScript')
  quiet(t, plain)
})

t.test('the request journal, live: a request the app makes shows on the console without a reload, with its trouble; Clear empties it', { skip }, async t => {
  const app = await buildTestApp(t, richSnapshot(), { chaos: true })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const origin = `http://127.0.0.1:${port}`
  const opened = await open(t, `${origin}/-/`)
  const { page } = opened
  const rows = page.locator('#requests-rows tr')
  // The preview's own request is the first.
  await rows.first().waitFor()
  await fetch(`${origin}/en/api/internal/explore/?companies=7&__status=503`, { headers: { prefer: 'delay=10' } })
  const row = rows.filter({ hasText: '__status=503' })
  await row.waitFor()
  t.same(await row.locator('td').allTextContents().then(cells => [cells[1], cells[2], cells[3], cells[5]]),
    ['GET', '/en/api/internal/explore/?companies=7&__status=503', '503', '503 (__status), 10 ms (Prefer); draw 0'], 'method, URL, status and trouble, why and which draw')
  await page.locator('#requests-clear').click()
  await page.locator('#requests-rows:empty').waitFor({ state: 'attached' })
  t.match(await page.locator('#requests-summary').textContent(), /^0 kept of the last 1000/)
  quiet(t, opened)
})
