// Writes schemas/*.schema.json from the TypeBox sources (`npm run schemas`), or with --check exits 1
// when a committed file is stale.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { jsonSchemaFiles } from '../src/schemas/json-schema-files.js'

const check = process.argv.includes('--check')
const dir = join(import.meta.dirname, '..', 'schemas')
let stale = 0
for (const [name, contents] of Object.entries(jsonSchemaFiles())) {
  const file = join(dir, name)
  const current = await readFile(file, 'utf8').catch(() => null)
  if (current === contents) continue
  if (check) {
    stale++
    process.stderr.write(`schemas/${name} is stale: run npm run schemas\n`)
  } else {
    await writeFile(file, contents)
    process.stdout.write(`wrote schemas/${name}\n`)
  }
}
process.exitCode = stale > 0 ? 1 : 0
