import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { jsonSchemaFiles } from '../../src/schemas/json-schema-files.js'

t.test('the committed JSON Schema files are the ones generated from TypeBox', async t => {
  for (const [name, contents] of Object.entries(jsonSchemaFiles())) {
    const committed = await readFile(join(import.meta.dirname, '..', '..', 'schemas', name), 'utf8')
    t.equal(committed, contents, `schemas/${name} is up to date (npm run schemas regenerates it)`)
  }
})

t.test('the generated files are plain JSON Schema: no TypeBox internals', async t => {
  for (const contents of Object.values(jsonSchemaFiles())) {
    const schema = JSON.parse(contents)
    t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema')
    t.notMatch(contents, /TypeBox|Symbol/)
  }
})
