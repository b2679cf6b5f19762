// The configuration and command-line references in docs/reference/ are the ones the code writes.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { OPTIONS } from '../../src/config.js'
import { referencePages } from '../../scripts/reference-pages.js'

const ROOT = join(import.meta.dirname, '..', '..')

t.test('the committed reference pages are the ones generated from the code', async t => {
  for (const [path, contents] of Object.entries(referencePages())) {
    const committed = await readFile(join(ROOT, path), 'utf8').catch(() => '(missing)')
    t.equal(committed, contents, `${path} is up to date (npm run docs:reference writes it)`)
  }
})

t.test('the configuration reference has a row for every option, with its rule', async t => {
  const page = referencePages()['docs/reference/configuration.md'] as string
  for (const option of OPTIONS) {
    const row = page.split('\n').find(line => line.startsWith(`| \`${option.env}\` | \`${option.flag}\` |`))
    t.ok(row?.includes(option.rule.replace(/\|/g, '\\|')), `${option.env}: a row that says what it accepts`)
  }
})
