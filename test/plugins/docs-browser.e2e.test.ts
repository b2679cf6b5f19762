// Drives Swagger UI at /-/docs in a real headless Chromium: the explore operation renders, and "Try it out" → "Execute" shows a live 200 page.
import t from 'tap'
import { chromium } from 'playwright-core'
import { buildTestApp, CHROMIUM, CHROMIUM_ARGS, chromiumSkip } from '../helpers.js'

const skip = chromiumSkip('/-/docs')

const EXPLORE_TEMPLATE = '/{lang}/api/internal/explore/'

t.test('Swagger UI: try the explore GET with lang=en and companies=7, and execute it', { skip }, async t => {
  const app = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }

  // chromium.launch gives each browser a fresh temporary profile and removes it on close.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  // Swagger UI renders asynchronously after loading a 1 MB bundle: generous, but bounded, waits.
  page.setDefaultTimeout(30_000)
  const pageErrors: string[] = []
  page.on('pageerror', error => pageErrors.push(error.message))
  // Whatever the Content-Security-Policy blocks: Chromium says so on the console, and the page gets an event.
  const refused: string[] = []
  page.on('console', message => { if (/Content Security Policy/i.test(message.text())) refused.push(message.text()) })
  await page.exposeFunction('cspViolation', (what: string) => { refused.push(what) })
  // As text: the page's script, run in Chromium before the page's own (no DOM types here).
  await page.addInitScript('document.addEventListener("securitypolicyviolation", event => { window.cspViolation(event.violatedDirective + ": " + event.blockedURI) })')

  const docs = await page.goto(`http://127.0.0.1:${port}/-/docs`)
  t.equal(docs?.status(), 200, '/-/docs answers')
  t.match(docs?.headers()['content-security-policy'], /default-src 'none'/, 'under a Content-Security-Policy')

  // The GET block of the explore path; OPTIONS on the same path is a separate block.
  const operation = page.locator('.opblock.opblock-get', { has: page.locator(`[data-path="${EXPLORE_TEMPLATE}"]`) })
  await operation.locator('.opblock-summary').waitFor()
  t.equal(await operation.count(), 1, 'the explore GET operation is rendered once')

  await operation.locator('.opblock-summary').click()
  await operation.locator('.try-out__btn').click()
  await operation.locator('tr[data-param-name="lang"][data-param-in="path"] input').fill('en')
  // `companies` is an array parameter: its first input appears after "Add string item".
  const companies = operation.locator('tr[data-param-name="companies"][data-param-in="query"]')
  await companies.locator('button.json-schema-form-item-add').click()
  await companies.locator('.json-schema-form-item input').first().fill('7')
  await operation.locator('.execute').click()

  // The live response row, not the table's "Code" header cell, which has the same class.
  const status = operation.locator('.live-responses-table td.response-col_status:not(.col_header)')
  await status.waitFor()
  t.equal((await status.textContent())?.trim(), '200', 'the live response is a 200')
  const body = await operation.locator('.live-responses-table .response-col_description .highlight-code code').first().textContent() ?? ''
  t.match(body, /"count"/, 'the live body is the page envelope')
  // smallSnapshot links company 7 to every third of its 25 `en` items.
  t.match(body, /"count":\s*8\b/, 'the companies value reached the service')
  const requestUrl = await operation.locator('.request-url pre').textContent() ?? ''
  t.match(requestUrl, `http://127.0.0.1:${port}/en/api/internal/explore/?companies=7`, 'the request Swagger UI sent')
  t.same(pageErrors, [], 'no uncaught errors in the page')
  t.same(refused, [], 'nothing the page needs is refused by its Content-Security-Policy')
})
