// Writes schemas/*.schema.json from the TypeBox sources (`npm run schemas`), or with --check exits 1
// when a committed file is stale.
import { jsonSchemaFiles } from '../src/schemas/json-schema-files.js'
import { writeGenerated } from './write-generated.js'

await writeGenerated(Object.fromEntries(Object.entries(jsonSchemaFiles()).map(([name, contents]) => [`schemas/${name}`, contents])), 'npm run schemas')
