// `explore-replica convert IN OUT`: format v1 ⇄ JSON Lines by extension, every field kept; IN must pass the service's
// loader, OUT is renamed into place so a watching service never sees half of it.
import { SnapshotError, ConvertError } from '../errors.js'
import { checkSnapshotFile, isJsonLinesPath } from '../snapshot/load/load-snapshot.js'
import { readItems } from '../snapshot/read-items.js'
import { fileStamp } from '../snapshot/store/serve-chain.js'
import { writeSnapshotFile } from '../snapshot/write-snapshot-file.js'

export const CONVERT_USAGE = `Usage: explore-replica convert IN OUT   (npm run snapshot:convert -- IN OUT)
Converts a snapshot between format v1 (.json) and JSON Lines (.jsonl, .ndjson), by the files' extensions.
IN must be valid (it is checked as the service checks it); OUT is replaced in one rename.
`

export async function convertCommand (args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(CONVERT_USAGE)
    return 0
  }
  if (args.length !== 2) {
    process.stderr.write(CONVERT_USAGE)
    return 2
  }
  const [input, output] = args as [string, string]
  const toLines = isJsonLinesPath(output)
  if (isJsonLinesPath(input) === toLines) {
    process.stderr.write(`${input} and ${output} are both ${toLines ? 'JSON Lines' : 'JSON'}: nothing to convert\n`)
    return 1
  }
  const started = performance.now()
  // Streamed twice (checked, then converted) so memory stays the model's; the stamp catches a change in between.
  const stamp = await fileStamp(input)
  let facts
  try {
    facts = await checkSnapshotFile(input)
  } catch (error) {
    process.stderr.write(
      `${error instanceof SnapshotError ? error.message : `${input}: ${(error as Error).message}`}\n`
    )
    return 1
  }
  const { generatedAt, languages, itemCounts: expected } = facts
  try {
    await writeSnapshotFile(output, {
      generatedAt,
      languages,
      // One pass over the input per language, whichever its format: memory stays that of one item.
      items: async (code, each) => {
        await readItems(input, async (language, item, index) => {
          if (language !== code) return
          const own = item.language
          if (toLines && own !== undefined && own !== language) {
            throw new ConvertError(
              `languages.${language}[${index}] has a field "language" (${JSON.stringify(own)}), which JSON Lines reads as the item's language: rename it first`
            )
          }
          await each(item)
        })
        if (await fileStamp(input) !== stamp) {
          throw new ConvertError(`${input} changed while it was converted: run again`)
        }
      }
    }, {
      format: toLines ? 'jsonl' : 'compact',
      check: async temporary => {
        const counts = (await checkSnapshotFile(temporary)).itemCounts
        if (JSON.stringify(counts) !== JSON.stringify(expected)) {
          throw new ConvertError(
            `the output has ${JSON.stringify(counts)} items, the input ${JSON.stringify(expected)}: nothing written`
          )
        }
      }
    })
  } catch (error) {
    if (!(error instanceof ConvertError || error instanceof SnapshotError)) throw error
    process.stderr.write(
      `${error instanceof SnapshotError ? `the output would not load: ${error.message}` : error.message}\n`
    )
    return 1
  }
  const counts = Object.entries(expected).map(([code, n]) => `${code}: ${n}`).join(', ')
  process.stdout.write(`Wrote ${output} (${counts} items) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  return 0
}
