// Takes the pictures of the console in docs/guides/editing-snapshots.md (docs/console.png, docs/console-preview.png) in headless
// Debian chromium: the sample snapshot served, then a bad save refused, and a preview of one company.
// Run: npx tsx scripts/console-screenshots.ts
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { ReloadOutcome } from '../src/snapshot/store/snapshot-store.js'

const CHROMIUM = '/usr/bin/chromium'
const root = join(import.meta.dirname, '..')

interface Item { backdate: string, display_image: { url: string } | null }

/**
 * The sample's images live on media.example.org, which does not exist: each becomes a flat placeholder,
 * coloured from its name, so the pictures show where images go without reaching the network.
 */
function placeholder (url: string): string {
  let hash = 0
  for (const char of url) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="450"><rect width="800" height="450" fill="hsl(${hash % 360} 35% 62%)"/></svg>`
  return `data:image/svg+xml,${encodeURIComponent(svg)}`
}

if (!existsSync(CHROMIUM)) {
  process.stderr.write('Debian chromium is not installed (apt-get install chromium)\n')
  process.exit(1)
}
const dir = await mkdtemp(join(tmpdir(), 'console-screenshots-'))
const file = join(dir, 'snapshot.json')
const doc = JSON.parse(await readFile(join(root, 'data', 'snapshot.json'), 'utf8')) as { languages: Record<string, Item[]> }
for (const items of Object.values(doc.languages)) {
  for (const item of items) if (item.display_image !== null) item.display_image.url = placeholder(item.display_image.url)
}
await writeFile(file, JSON.stringify(doc))

const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, watch: true, reloadDebounceMs: 50 } }))
await app.snapshots.start()
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as { port: number }
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] })
try {
  // An editor's save with an impossible date: refused, and the sample stays served.
  const en = doc.languages.en as Item[]
  ;(en[41] as Item).backdate = '2024-02-30'
  const outcomes: ReloadOutcome[] = []
  const refused = (async () => {
    while (outcomes.at(-1) !== 'failed') outcomes.push((await once(app.snapshots, 'reloaded'))[0] as ReloadOutcome)
  })()
  await writeFile(file, JSON.stringify(doc))
  await refused

  const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } })
  const cards = page.waitForResponse(response => response.url().includes('/api/internal/explore/'))
  await page.goto(`http://127.0.0.1:${port}/-/?lang=en&companies=20&limit=6`)
  await cards
  await page.locator('#preview-cards:not([aria-busy]) .card').first().waitFor()
  // A string: this program has no DOM types. Every image decoded before the picture is taken.
  await page.evaluate('Promise.all(Array.from(document.images, image => image.decode().catch(() => {})))')
  await page.screenshot({ path: join(root, 'docs', 'console.png') })
  await page.locator('#preview').screenshot({ path: join(root, 'docs', 'console-preview.png') })
  process.stdout.write('wrote docs/console.png and docs/console-preview.png\n')
} finally {
  await browser.close()
  await app.close()
  await rm(dir, { recursive: true, force: true })
}
