// `explore-replica check FILE…`: each file read by the service's own reader for its kind, before it is dropped or
// published.
import { open, readFile, stat } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { ImageError, refusalReport, SnapshotError, ManifestError } from '../errors.js'
import { readImage, readImageHeader } from '../snapshot/images/version-image.js'
import { isManifestName, MANIFEST_SUFFIX } from '../schemas/manifest.js'
import { readChangeFile } from '../snapshot/changes/read-change-file.js'
import { startsWithBom } from '../snapshot/load/json-text.js'
import { checkSnapshotFile, describeReadError, isJsonLinesPath } from '../snapshot/load/load-snapshot.js'
import { readLines } from '../snapshot/load/read-lines.js'
import { parseManifest } from '../sources/read-manifest.js'

export const CHECK_USAGE = `Usage: explore-replica check FILE [FILE…]   (npm run snapshot:check -- FILE…)
Checks the files an editor or a publisher writes, each with the reader the service uses for its kind, which
check tells by the file's name and first line:
  ${`*${MANIFEST_SUFFIX}`.padEnd(18)} a fleet's manifest, read as a replica following it (SNAPSHOT_URL) reads it. Only the
                     manifest itself: the snapshot and change files it names are not fetched or checked
                     (give them to check as well)
  *.jsonl, *.ndjson  a change file when its first line is a change header {"changes": "explore", …} (named *.jsonl:
                     a replica reads change files by no other name), read
                     as a replica reads CHANGES_DIR's files and a manifest's changes; else a JSON Lines
                     snapshot
  *.json             a format v1 snapshot
  *.image            a version image a replica wrote in STATE_DIR/images, read and checked whole as a replica
                     reads one (its magic, format, checksums, and every offset and length)
A file named otherwise is "not a snapshot, change file or manifest", and fails the check.
A valid file is one line:
  FILE: valid (en: 25, fr: 3 items; generated_at …)
  FILE: valid (change file ID: 4 upserts, 1 delete; generated_at …)
  FILE: valid (manifest: SNAPSHOT and 2 change files; those files were not fetched or checked)
  FILE: valid (version image of VERSION: en: 25, fr: 3 items)
An invalid one is every problem, each with its line and column (a bad field's value; in JSON Lines a missing field has its line alone) as the service reports it.
Exit 0 when every file is valid, 1 when one is not, 2 without a file or with an unknown option.
`

/** The process's stdout and stderr, or a test's. */
interface CheckOutput {
  out: (text: string) => void
  err: (text: string) => void
}

const PROCESS_OUTPUT: CheckOutput = {
  out: text => { process.stdout.write(text) },
  err: text => { process.stderr.write(text) }
}

type Kind = 'snapshot' | 'changes' | 'manifest' | 'image'

export async function checkCommand (argv: string[], output: CheckOutput = PROCESS_OUTPUT): Promise<number> {
  const { values, positionals: files } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { help: { type: 'boolean', short: 'h' } }
  })
  if (values.help === true) {
    output.out(CHECK_USAGE)
    return 0
  }
  if (files.length === 0) {
    output.err(CHECK_USAGE)
    return 2
  }
  let failed = 0
  for (const file of files) {
    const kind = await kindOf(file)
    const report = kind === null
      ? {
          valid: false,
          text: `${file}: not a snapshot, change file or manifest: its name ends in none of .json, .jsonl, .ndjson (snapshots, change files) or ${MANIFEST_SUFFIX} (a fleet's manifest)`
        }
      : kind === 'changes' && !/\.jsonl$/i.test(file)
        // CHANGES_DIR and manifests take *.jsonl only: such a file would never be applied.
        ? {
            valid: false,
            text: `${file}: a change file, but named otherwise than *.jsonl: a replica reads change files only by that name`
          }
        : await CHECKS[kind](file)
    if (!report.valid) failed++
    output.out(`${report.text}\n`)
  }
  return failed > 0 ? 1 : 0
}

interface Report {
  valid: boolean
  text: string
}

const CHECKS: Record<Kind, (file: string) => Promise<Report>> = {
  async snapshot (file) {
    try {
      const facts = await checkSnapshotFile(file)
      const counts = Object.entries(facts.itemCounts).map(([lang, n]) => `${lang}: ${n}`).join(', ')
      return { valid: true, text: `${file}: valid (${counts} items${generated(facts.generatedAt)})` }
    } catch (error) {
      return refused('snapshot', file, error)
    }
  },

  async changes (file) {
    try {
      const changes = await readChangeFile(file)
      const upserts = changes.ops.filter(op => op.op === 'upsert').length
      return {
        valid: true,
        text: `${file}: valid (change file ${changes.id}: ${count(upserts, 'upsert')}, ${count(changes.ops.length - upserts, 'delete')}${generated(changes.generatedAt)})`
      }
    } catch (error) {
      return refused('change file', file, error)
    }
  },

  async image (file) {
    let handle
    try {
      handle = await open(file, 'r')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code !== 'string') throw error
      return { valid: false, text: refusalReport('version image', file, 'SNAPSHOT_ERR_UNREADABLE', [describeReadError(code)]) }
    }
    try {
      const header = await readImageHeader(handle)
      const model = await readImage(handle, header, file)
      const counts = Object.entries(model.itemCounts()).map(([lang, n]) => `${lang}: ${n}`).join(', ')
      model.memory.retire()
      return { valid: true, text: `${file}: valid (version image of ${header.made.version}: ${counts} items)` }
    } catch (error) {
      // Whatever stops the read (a header of the wrong shape too) is a reason the image is refused.
      const problem = error instanceof ImageError ? error.message : `it does not read (${(error as Error).message})`
      return { valid: false, text: refusalReport('version image', file, 'SNAPSHOT_ERR_INVALID', [problem]) }
    } finally {
      await handle.close()
    }
  },

  async manifest (file) {
    let text: string
    try {
      // As a follower reads a download: the bytes as UTF-8, a byte order mark kept (JSON.parse refuses it).
      text = await readFile(file, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code !== 'string') throw error
      return {
        valid: false,
        text: refusalReport('manifest', file, 'SNAPSHOT_ERR_UNREADABLE', [describeReadError(code)])
      }
    }
    try {
      const manifest = parseManifest(text)
      const changes = manifest.changes.length === 0 ? 'no change files' : count(manifest.changes.length, 'change file')
      return {
        valid: true,
        text: `${file}: valid (manifest: ${manifest.snapshot} and ${changes}; those files were not fetched or checked)`
      }
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error
      return { valid: false, text: refusalReport('manifest', file, 'SNAPSHOT_ERR_INVALID', error.problems) }
    }
  }
}

/** By name, and for JSON Lines by the first line, as a replica tells; null for no known name. */
async function kindOf (file: string): Promise<Kind | null> {
  if (isManifestName(file)) return 'manifest'
  if (/\.image$/.test(file)) return 'image'
  if (isJsonLinesPath(file)) return isChangeHeader(await firstValue(file)) ? 'changes' : 'snapshot'
  return /\.json$/i.test(file) ? 'snapshot' : null
}

/** Longest first line looked at: a change header is a short line. */
const FIRST_LINE_MAX_BYTES = 1024 * 1024

/** The first non-blank line's JSON (a BOM allowed, as by the loader); else undefined. */
async function firstValue (file: string): Promise<unknown> {
  // A named pipe would wait for a writer: only a regular file is opened here (the reader reports the rest).
  if ((await stat(file).catch(() => null))?.isFile() !== true) return undefined
  let value: unknown
  await readLines(file, {
    line: (bytes, number) => {
      let text = bytes.toString('utf8', number === 1 && startsWithBom(bytes) ? 3 : 0)
      if (text.endsWith('\r')) text = text.slice(0, -1)
      if (/^[ \t]*$/.test(text)) return true
      try {
        value = JSON.parse(text)
      } catch {}
      return false
    }
  }, 64 * 1024, FIRST_LINE_MAX_BYTES).catch(() => {})
  return value
}

/** The first value the snapshot's reader refuses as a change file's (frame-lines.ts). */
function isChangeHeader (value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'changes' in value &&
    !('snapshot' in value) && !('pk' in value)
}

/** Any error is this file's failure only: the other files are still checked. */
function refused (kind: string, file: string, error: unknown): Report {
  return {
    valid: false,
    text: error instanceof SnapshotError
      ? refusalReport(kind, file, error.code, error.problems)
      : `${file}: ${(error as Error).message}`
  }
}

function generated (at: string | null): string {
  return at === null ? '' : `; generated_at ${at}`
}

function count (n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}
