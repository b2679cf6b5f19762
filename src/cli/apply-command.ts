// `explore-replica apply SNAPSHOT CHANGES… --out FILE`: the snapshot a replica serves for that chain, by the reference
// merge (snapshot/changes/merge-snapshot.ts), checked before the rename.
import { parseArgs } from 'node:util'
import { SnapshotError, UsageError } from '../errors.js'
import { refuseInputAsOut } from './output-not-input.js'
import { readChangeFile } from '../snapshot/changes/read-change-file.js'
import {
  applyChangesToSnapshot, type ChangeLine, type SnapshotDocument
} from '../snapshot/changes/merge-snapshot.js'
import { startsWithBom } from '../snapshot/load/json-text.js'
import { checkSnapshotFile } from '../snapshot/load/load-snapshot.js'
import { readLines } from '../snapshot/load/read-lines.js'
import { readItems } from '../snapshot/read-items.js'
import { formatFor, writeSnapshotFile } from '../snapshot/write-snapshot-file.js'
import type { SnapshotItem } from '../schemas/snapshot.js'

export const APPLY_USAGE = `Usage: explore-replica apply SNAPSHOT CHANGES.jsonl… --out FILE
Writes the snapshot that SNAPSHOT becomes with the change files applied in the order given: what a replica
serves for that chain (the same pages). Every file is checked first as a replica checks it. FILE's extension
gives its format (.json: format v1, .jsonl/.ndjson: JSON Lines); it is replaced in one rename, once it loads.
Memory: the whole snapshot, as parsed items.
  --out FILE   the snapshot to write: not one of the inputs (by any path or link); missing directories are
               created
Exit 0 written, 1 a file is invalid or cannot be read (nothing written), 2 bad usage.
`

export async function applyCommand (argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
  })
  if (values.help === true) {
    process.stdout.write(APPLY_USAGE)
    return 0
  }
  if (positionals.length < 2) throw new UsageError('expected a snapshot and at least one change file')
  if (values.out === undefined) throw new UsageError('--out FILE is required')
  const [snapshotFile, ...changeFiles] = positionals as [string, ...string[]]
  await refuseInputAsOut(values.out, [
    ['the snapshot', snapshotFile], ...changeFiles.map(file => ['the change file', file] as [string, string])
  ])
  const started = performance.now()

  let document: SnapshotDocument
  try {
    const facts = await checkSnapshotFile(snapshotFile)
    // Every language served, those without items too, in the snapshot's order.
    document = { languages: Object.fromEntries(facts.languages.map(code => [code, [] as SnapshotItem[]])) }
    if (facts.generatedAt !== null) document.generated_at = facts.generatedAt
    for (const file of changeFiles) await readChangeFile(file)
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    process.stderr.write(`${error.message}\nnothing written\n`)
    return 1
  }
  await readItems(snapshotFile, (language, item) => { document.languages[language]?.push(item as SnapshotItem) })
  const changes: ChangeLine[][] = []
  for (const file of changeFiles) changes.push(await changeLinesOf(file))
  const merged = applyChangesToSnapshot(document, changes)

  const languages = Object.keys(merged.languages)
  const total = languages.reduce((sum, code) => sum + (merged.languages[code]?.length ?? 0), 0)
  try {
    await writeSnapshotFile(values.out, {
      generatedAt: merged.generated_at ?? null,
      languages,
      items: async (code, each) => { for (const item of merged.languages[code] ?? []) await each(item) }
    }, {
      format: formatFor(values.out, total),
      check: async temporary => { await checkSnapshotFile(temporary) }
    })
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    process.stderr.write(`the merged snapshot would not load: ${error.message}\nnothing written\n`)
    return 1
  }
  const counts = languages.map(code => `${code}: ${merged.languages[code]?.length ?? 0}`).join(', ')
  process.stdout.write(
    `Wrote ${values.out} (${counts} items; ${changeFiles.length} change file${changeFiles.length === 1 ? '' : 's'} applied) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`
  )
  return 0
}

/** A checked change file's op lines, in order. */
async function changeLinesOf (file: string): Promise<ChangeLine[]> {
  const lines: ChangeLine[] = []
  let header = true
  await readLines(file, {
    line: bytes => {
      const text = bytes.toString('utf8', startsWithBom(bytes) ? 3 : 0).trim()
      if (text === '') return true
      if (!header) lines.push(JSON.parse(text) as ChangeLine) // readChangeFile found the header first
      header = false
      return true
    }
  })
  return lines
}
