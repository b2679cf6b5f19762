// `explore-replica diff OLD NEW --out CHANGES.jsonl`: the change file taking snapshot OLD to NEW (either format).
// Memory is an index of OLD's item digests with NEW streamed past it, never both snapshots.
import { createHash } from 'node:crypto'
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { SnapshotError, UsageError, ChangeFileError } from '../errors.js'
import { refuseInputAsOut } from './output-not-input.js'
import { CHANGE_ID_MAX_LENGTH, CHANGE_ID_PATTERN } from '../schemas/change-file.js'
import { checkSnapshotFile } from '../snapshot/load/load-snapshot.js'
import { readItems } from '../snapshot/read-items.js'
import { fileStamp } from '../snapshot/store/serve-chain.js'
import { writeChangeFile } from '../snapshot/write-change-file.js'

export const DIFF_USAGE = `Usage: explore-replica diff OLD NEW --out CHANGES.jsonl [--id ID]
Writes the change file that takes snapshot OLD to snapshot NEW (format v1 .json or JSON Lines .jsonl/.ndjson,
each by its extension): an upsert for every item that is new or changed in NEW, a delete for every item NEW
no longer has. Both snapshots are checked as the service checks them first. Memory: a digest per item of
OLD; NEW is streamed.
  --out FILE   the change file to write (.jsonl), replaced in one rename: not OLD or NEW (by any path or
               link); missing directories are created
  --id ID      the change's name in the file's header (letters, digits, ., _, -; ${CHANGE_ID_MAX_LENGTH} at most);
               default: --out's name without .jsonl (chg-0003.jsonl → chg-0003)
Exit 0 written, 1 a snapshot is invalid or cannot be read (nothing written), 2 bad usage.
`

const ID = new RegExp(CHANGE_ID_PATTERN)

export async function diffCommand (argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' }, id: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
  })
  if (values.help === true) {
    process.stdout.write(DIFF_USAGE)
    return 0
  }
  if (positionals.length !== 2) throw new UsageError(`expected two snapshots, OLD and NEW; got ${positionals.length}`)
  if (values.out === undefined) throw new UsageError('--out CHANGES.jsonl is required')
  if (!values.out.endsWith('.jsonl')) {
    throw new UsageError(
      `--out must name a .jsonl file (a change file is JSON Lines), got ${JSON.stringify(values.out)}`
    )
  }
  const id = values.id ?? basename(values.out, '.jsonl')
  if (!ID.test(id)) {
    throw new UsageError(values.id === undefined
      ? `--out's name ${JSON.stringify(id)} is not a change id (letters, digits, ., _, -): give one with --id`
      : `--id must be letters, digits, ., _ or -, got ${JSON.stringify(id)}`)
  }
  if (id.length > CHANGE_ID_MAX_LENGTH) {
    throw new UsageError(
      `${values.id === undefined ? '--out\'s name' : '--id'} is ${id.length} characters long; a change id has at most ${CHANGE_ID_MAX_LENGTH}${values.id === undefined ? ': give one with --id' : ''}`
    )
  }
  const [oldFile, newFile] = positionals as [string, string]
  await refuseInputAsOut(values.out, [['the old snapshot', oldFile], ['the new snapshot', newFile]])
  const started = performance.now()

  // Checked whole, one at a time (memory: one model), and not changed before they are read again.
  const stamps = [await fileStamp(oldFile), await fileStamp(newFile)]
  let oldLanguages: string[]
  let newLanguages: string[]
  let generatedAt: string | null
  try {
    oldLanguages = (await checkSnapshotFile(oldFile)).languages
    const after = await checkSnapshotFile(newFile)
    newLanguages = after.languages
    generatedAt = after.generatedAt
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error
    process.stderr.write(`${error.message}\n`)
    return 1
  }

  // language → pk → OLD's digest; what is left once NEW is read, NEW lacks.
  const index = new Map<string, Map<number, string>>()
  await readItems(oldFile, (language, item) => {
    let pks = index.get(language)
    if (pks === undefined) index.set(language, pks = new Map())
    pks.set(item.pk as number, digest(item))
  })
  let added = 0
  let changed = 0
  const listed = new Set<string>()
  let written
  try {
    written = await writeChangeFile(values.out, { id, generatedAt }, async emit => {
      await readItems(newFile, async (language, item) => {
        listed.add(language)
        const pk = item.pk as number
        const pks = index.get(language)
        const was = pks?.get(pk)
        if (was !== undefined) pks?.delete(pk)
        if (was === digest(item)) return
        if (was === undefined) added++
        else changed++
        await emit({ op: 'upsert', language, item })
      })
      for (const [language, pks] of index) {
        for (const pk of pks.keys()) await emit({ op: 'delete', language, pk })
      }
      if (await fileStamp(oldFile) !== stamps[0] || await fileStamp(newFile) !== stamps[1]) {
        throw new ChangeFileError('a snapshot changed while it was read: run again')
      }
    })
  } catch (error) {
    if (!(error instanceof ChangeFileError)) throw error
    process.stderr.write(`${error.message}: nothing written\n`)
    return 1
  }
  // What a change file cannot say: a language is never removed, nor created without an item.
  const gone = oldLanguages.filter(code => !newLanguages.includes(code))
  const empty = newLanguages.filter(code => !oldLanguages.includes(code) && !listed.has(code))
  for (const code of gone) {
    process.stderr.write(
      `warning: NEW has no language ${code}: its items are deleted, and it is served empty (a change file cannot remove a language)\n`
    )
  }
  for (const code of empty) {
    process.stderr.write(
      `warning: NEW has ${code} without items, which OLD lacks: a change file cannot create an empty language, so it is not served\n`
    )
  }
  process.stdout.write(
    `Wrote ${values.out} (id ${id}): ${count(written.upserts, 'upsert')} (${added} new, ${changed} changed), ${count(written.deletes, 'delete')}, ${written.bytes} bytes in ${((performance.now() - started) / 1000).toFixed(1)} s\n`
  )
  return 0
}

function count (n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}

/** 120 bits of SHA-256 over the item with keys sorted at every depth: another key order is no change. */
function digest (item: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(item, sortedKeys)).digest('base64').slice(0, 20)
}

function sortedKeys (_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  return Object.fromEntries(Object.keys(value).sort().map(key => [key, (value as Record<string, unknown>)[key]]))
}
