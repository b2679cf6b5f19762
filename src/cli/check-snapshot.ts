#!/usr/bin/env node
// `npm run snapshot:check -- FILE…`: validates snapshot files with the service's own loader, so an editor
// can check a file before dropping it. Prints every problem; exit 0 when all are valid, 1 otherwise.
import { SnapshotError } from '../errors.js'
import { loadSnapshotFile } from '../snapshot/load-snapshot.js'

const files = process.argv.slice(2)
if (files.length === 0 || files.includes('--help')) {
  process.stdout.write('Usage: npm run snapshot:check -- FILE [FILE…]\nValidates snapshot files as the service would load them.\n')
  process.exit(files.length === 0 ? 1 : 0)
}
let failed = 0
for (const file of files) {
  try {
    const model = await loadSnapshotFile(file)
    const counts = Object.entries(model.itemCounts()).map(([lang, n]) => `${lang}: ${n}`).join(', ')
    process.stdout.write(`${file}: valid (${counts} items${model.info.generatedAt === null ? '' : `; generated_at ${model.info.generatedAt}`})\n`)
  } catch (error) {
    failed++
    process.stdout.write(`${error instanceof SnapshotError ? error.message : `${file}: ${(error as Error).message}`}\n`)
  }
}
process.exit(failed > 0 ? 1 : 0)
