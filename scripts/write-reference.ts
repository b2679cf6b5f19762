// Writes docs/reference/configuration.md and command-line.md from the code (`npm run docs:reference`), or
// with --check exits 1 when a committed page is stale.
import { referencePages } from './reference-pages.js'
import { writeGenerated } from './write-generated.js'

await writeGenerated(referencePages(), 'npm run docs:reference')
