// `explore-replica check FILE…` (npm run snapshot:check -- FILE…): validates snapshot files with the
// service's own loader, so an editor can check a file before dropping it. Prints every problem; exit 0
// when all are valid, 1 otherwise.
import { SnapshotError } from '../errors.js'
import { loadSnapshotFile } from '../snapshot/load/load-snapshot.js'

export const CHECK_USAGE = `Usage: explore-replica check FILE [FILE…]   (npm run snapshot:check -- FILE…)
Validates snapshot files (format v1 .json, JSON Lines .jsonl/.ndjson) as the service would load them.
Exit 0 when every file is valid, 1 when one is not, 2 without a file.
`

export async function checkCommand (files: string[]): Promise<number> {
  if (files.includes('--help') || files.includes('-h')) {
    process.stdout.write(CHECK_USAGE)
    return 0
  }
  if (files.length === 0) {
    process.stderr.write(CHECK_USAGE)
    return 2
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
  return failed > 0 ? 1 : 0
}
