// file → validate → index → immutable model. Reads a snapshot file (format v1, one JSON document, streamed
// through read-document.ts; a JSON Lines file goes to load-json-lines.ts) and either returns a SnapshotModel
// or throws a SnapshotError naming the file, the JSON path and the rule.
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { isUtf8 } from 'node:buffer'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../schemas/formats.js'
import { LANGUAGE, SnapshotItemSchema, SnapshotSchema, type Snapshot, type SnapshotItem } from '../schemas/snapshot.js'
import { SnapshotError } from '../errors.js'
import { SnapshotModelBuilder } from './build-model.js'
import type { SnapshotInfo, SnapshotModel } from './snapshot-model.js'
import { isJsonLinesPath, loadJsonLinesFile } from './load-json-lines.js'
import { describeReadError, describeSyntaxError, startsWithBom, type LoadOptions } from './load-options.js'
import { NotText, followDocument, readDocument } from './read-document.js'
import { NotFollowed } from './stream-document.js'
import { ValidationReport, jsonPath } from './validation-report.js'

// Compiled once: checking 200k items is then a tight loop, not an interpretation of the schema. The item
// and top-level checks are parts of the one snapshot schema, not rules of their own.
const snapshotCheck = TypeCompiler.Compile(SnapshotSchema)
const itemCheck = TypeCompiler.Compile(SnapshotItemSchema)
const generatedAtCheck = TypeCompiler.Compile(Type.Pick(SnapshotSchema, ['generated_at']))

/**
 * A bad file up to this size is parsed whole for its report, which then names every problem precisely
 * (a syntax error's line and column, the top level's rules). A larger one is reported from the stream:
 * its items' problems by JSON path, any other by byte offset.
 */
export const WHOLE_REPORT_BYTES = 64 * 1024 * 1024

/**
 * Reads and validates a snapshot file, streamed from disk in chunks. Throws SnapshotError, never anything
 * else, for a bad file. The event loop gets a turn every few milliseconds, so a service reloading a large
 * snapshot keeps answering from the one it serves.
 */
export async function loadSnapshotFile (file: string, options: LoadOptions = {}): Promise<SnapshotModel> {
  if (isJsonLinesPath(file)) return await loadJsonLinesFile(file, options)
  const reader = new DocumentReader(file, options)
  let stopped: unknown = null
  try {
    await readDocument(file, reader, options.readChunk)
  } catch (error) {
    if (!(error instanceof NotFollowed || error instanceof NotText || error === REPORT_FULL)) {
      // Only the file system's errors are the file's; anything else is the service's, and not an editor's to read.
      if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error
      throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(error)])
    }
    stopped = error
  }
  if (stopped === null && reader.valid) return await reader.builder.buildInSlices(reader.info())
  if (stopped instanceof NotText) throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, [stopped.message])
  const size = (await stat(file).catch(() => null))?.size ?? Infinity
  if (size <= (options.wholeReportBytes ?? WHOLE_REPORT_BYTES)) {
    let raw: Buffer
    try {
      raw = await readFile(file)
    } catch (error) {
      throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(error)])
    }
    return loadWhole(raw, file, options)
  }
  throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, reader.problems(stopped))
}

/** Parses and validates snapshot bytes in one go; `file` names the source in the report. */
export function parseSnapshot (raw: Buffer, file: string, options: LoadOptions = {}): SnapshotModel {
  if (options.whole !== true) {
    const reader = new DocumentReader(file, options)
    reader.chunk(raw)
    try {
      followDocument(raw, reader)
      if (reader.valid) return reader.builder.build(reader.info())
    } catch (error) {
      if (!(error instanceof NotFollowed || error instanceof NotText || error === REPORT_FULL)) throw error
    }
  }
  return loadWhole(raw, file, options)
}

/** Thrown by the reader to stop reading once the report is full. */
const REPORT_FULL = new Error('the report is full')

/** The state of one streamed read: the digest, the builder, what the items' problems are so far. */
class DocumentReader {
  private readonly hash = createHash('sha1')
  readonly builder = new SnapshotModelBuilder()
  private readonly report: ValidationReport
  private generatedAt: string | null = null
  private topProblem: string | null = null

  constructor (private readonly file: string, private readonly options: LoadOptions) {
    this.report = new ValidationReport(options.problemCap)
  }

  get valid (): boolean {
    return this.report.problems.length === 0 && this.topProblem === null && this.builder.languageCount > 0
  }

  info (): SnapshotInfo {
    return { source: this.file, version: this.hash.digest('base64url'), generatedAt: this.generatedAt, loadedAt: (this.options.now ?? (() => new Date()))() }
  }

  // Arrow functions: the streamer calls them as handlers.
  readonly chunk = (bytes: Buffer): void => { this.hash.update(bytes) }

  readonly member = (key: string, value: Buffer): void => {
    // Any other member is allowed, but it must be JSON too.
    let parsed: unknown
    try {
      parsed = JSON.parse(value.toString('utf8'))
    } catch (error) {
      this.problem(`${jsonPath(`/${escapePointer(key)}`)}: not valid JSON: ${describeSyntaxError(error as Error, null)}`)
      return
    }
    if (key !== 'generated_at') return
    if (!generatedAtCheck.Check({ generated_at: parsed })) {
      this.report.addSchemaErrors(generatedAtCheck.Errors({ generated_at: parsed }))
      this.stopWhenFull()
      return
    }
    this.generatedAt = parsed as string
  }

  readonly language = (code: string): void => {
    if (!LANGUAGE.test(code)) {
      this.topProblem ??= `${jsonPath(`/languages/${escapePointer(code)}`)}: not a language code`
      return
    }
    this.builder.language(code)
  }

  readonly item = (language: string, index: number, bytes: Buffer): void => {
    const where = `/languages/${escapePointer(language)}/${index}`
    let item: unknown
    try {
      item = JSON.parse(bytes.toString('utf8'))
    } catch (error) {
      this.problem(`${jsonPath(where)}: not valid JSON: ${describeSyntaxError(error as Error, null)} of the item`)
      return
    }
    if (!itemCheck.Check(item)) {
      this.report.addSchemaErrors(itemCheck.Errors(item), '', where)
      this.stopWhenFull()
      return
    }
    if (this.topProblem !== null || this.report.problems.length > 0) return
    const first = this.builder.add(language, index, item)
    if (first >= 0) this.problem(`${jsonPath(`${where}/pk`)}: ${item.pk} repeats ${jsonPath(`/languages/${escapePointer(language)}/${first}`)}`)
  }

  /** The report of a file too large to be parsed whole: the items' problems, then what stopped the read. */
  problems (stopped: unknown): string[] {
    const lines = this.report.lines()
    if (this.topProblem !== null) lines.unshift(this.topProblem)
    if (stopped instanceof NotFollowed) lines.push(`not a snapshot document: ${stopped.message}`)
    if (lines.length === 0) lines.push('languages: must name at least one language')
    return lines
  }

  private problem (line: string): void {
    this.report.add(line)
    this.stopWhenFull()
  }

  private stopWhenFull (): void {
    if (this.report.full) {
      this.report.truncated = true
      throw REPORT_FULL
    }
  }
}

/** A JSON Pointer token: `~` and `/` escaped. */
function escapePointer (token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** The whole document at once: the precise report for a bad file. */
function loadWhole (raw: Buffer, file: string, options: LoadOptions): SnapshotModel {
  const start = checkText(raw, file)
  const document = parseJson(raw, start, file)
  const report = new ValidationReport(options.problemCap)
  if (!snapshotCheck.Check(document)) {
    report.addSchemaErrors(snapshotCheck.Errors(document))
    // Repeated pks too, so an editor gets every problem from one check, not one kind per attempt.
    reportRepeatedPks(document, report)
    throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, report.lines())
  }
  const snapshot = document as Snapshot
  const builder = new SnapshotModelBuilder()
  for (const [language, items] of Object.entries(snapshot.languages)) {
    builder.language(language)
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as SnapshotItem
      const first = builder.add(language, i, item)
      if (first >= 0) {
        report.add(`${jsonPath(`/languages/${language}/${i}/pk`)}: ${item.pk} repeats ${jsonPath(`/languages/${language}/${first}`)}`)
      }
    }
  }
  if (report.problems.length > 0) throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, report.lines())
  const version = createHash('sha1').update(raw).digest('base64url')
  return builder.build({ source: file, version, generatedAt: snapshot.generated_at ?? null, loadedAt: (options.now ?? (() => new Date()))() })
}

/** Repeated pks in a document that failed the schema: only where the shape allows looking. */
function reportRepeatedPks (document: unknown, report: ValidationReport): void {
  const languages = (document as { languages?: unknown } | null)?.languages
  if (languages === null || typeof languages !== 'object') return
  for (const [language, items] of Object.entries(languages)) {
    if (!Array.isArray(items)) continue
    const first = new Map<number, number>()
    items.forEach((item: unknown, i) => {
      const pk = (item as { pk?: unknown } | null)?.pk
      if (!Number.isSafeInteger(pk)) return
      const seen = first.get(pk as number)
      if (seen === undefined) first.set(pk as number, i)
      else report.add(`${jsonPath(`/languages/${language}/${i}/pk`)}: ${pk as number} repeats ${jsonPath(`/languages/${language}/${seen}`)}`)
    })
  }
}

/** Refuses what is not text at all; returns where the JSON starts (after a byte order mark). */
function checkText (raw: Buffer, file: string): number {
  const invalid = (problem: string) => new SnapshotError('SNAPSHOT_ERR_INVALID', file, [problem])
  if (raw.length === 0) throw invalid('the file is empty')
  if (!isUtf8(raw)) throw invalid('the file is not valid UTF-8 text')
  return startsWithBom(raw) ? 3 : 0
}

function parseJson (raw: Buffer, start: number, file: string): unknown {
  const invalid = (problem: string) => new SnapshotError('SNAPSHOT_ERR_INVALID', file, [problem])
  let text: string
  try {
    text = raw.toString('utf8', start)
  } catch {
    throw invalid(`the file is too large to parse as one JSON document (${raw.length} bytes)`)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw invalid(`not valid JSON: ${describeSyntaxError(error as Error, text)}`)
  }
}
