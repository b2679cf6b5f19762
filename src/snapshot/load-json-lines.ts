// file → validate → index → immutable model, for JSON Lines snapshots (contract §1: `.jsonl`, `.ndjson`):
// an optional header line, then one item per line with its `language`. The file is streamed in chunks, never
// held whole, and digested as it is read; every problem is reported with its line number.
import { createHash } from 'node:crypto'
import { isUtf8 } from 'node:buffer'
import { basename } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../schemas/formats.js'
import { JsonLinesHeaderSchema, JsonLinesItemSchema, type JsonLinesItem } from '../schemas/snapshot.js'
import { SnapshotError } from '../errors.js'
import { SnapshotModelBuilder } from './build-model.js'
import { describeReadError, describeSyntaxError, startsWithBom, type LoadOptions } from './load-options.js'
import { LineTooLong, readLines } from './read-lines.js'
import type { SnapshotModel } from './snapshot-model.js'
import { ValidationReport, preview } from './validation-report.js'

const headerCheck = TypeCompiler.Compile(JsonLinesHeaderSchema)
const itemCheck = TypeCompiler.Compile(JsonLinesItemSchema)

/** True when the file name says JSON Lines. */
export function isJsonLinesPath (file: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(file)
}

/** Reads and validates a JSON Lines snapshot. Throws SnapshotError, never anything else, for a bad file. */
export async function loadJsonLinesFile (file: string, options: LoadOptions = {}): Promise<SnapshotModel> {
  const reader = new LineReader(basename(file), options)
  try {
    await readLines(file, {
      chunk: bytes => reader.digest(bytes),
      line: (bytes, number) => reader.line(bytes, number)
    }, options.readChunk, options.maxLineBytes)
  } catch (error) {
    if (error instanceof LineTooLong) {
      throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, [`${basename(file)}:${error.number}: ${error.message}: is it one JSON document named .jsonl?`])
    }
    // Only the file system's errors are the file's; anything else is the service's, and not an editor's to read.
    if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error
    throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(error)])
  }
  return await reader.finish(file, options)
}

/** The state of one read: the header, the builder, the report, the digest and where the lines are. */
class LineReader {
  private readonly hash = createHash('sha1')
  private readonly builder = new SnapshotModelBuilder()
  private readonly report: ValidationReport
  /** The last line read. */
  private number = 0
  private content = false
  private generatedAt: string | null = null
  /** The header's languages; null without a header or a list: any language then. */
  private listed: Set<string> | null = null

  constructor (private readonly name: string, options: LoadOptions) {
    this.report = new ValidationReport(options.problemCap)
  }

  digest (chunk: Buffer): void {
    this.hash.update(chunk)
  }

  /** Line `at`, without its `\n`; false once the report is full (reading stops there, and says so). */
  line (bytes: Buffer, at: number): boolean {
    this.read(bytes, at)
    if (!this.report.full) return true
    this.report.truncated = true
    return false
  }

  private read (bytes: Buffer, at: number): void {
    this.number = at
    let line = bytes
    if (line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1)
    // Some editors start UTF-8 files with a byte order mark.
    const where = `${this.name}:${at}: `
    if (startsWithBom(line)) {
      if (at !== 1) {
        this.report.add(`${where}a byte order mark in the middle of the file (were files joined?)`)
        return
      }
      line = line.subarray(3)
    }
    if (isBlank(line)) return
    if (!isUtf8(line)) {
      this.report.add(`${where}not valid UTF-8 text`)
      return
    }
    let value: unknown
    try {
      value = JSON.parse(line.toString('utf8'))
    } catch (error) {
      this.report.add(`${where}not valid JSON: ${describeSyntaxError(error as Error, null)}`)
      return
    }
    const first = !this.content
    this.content = true
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.report.add(`${where}expected a JSON object, got ${preview(value)}`)
      return
    }
    // A header names the snapshot and is no item (an item may carry any extra field, `snapshot` too).
    if (first && 'snapshot' in value && !('pk' in value)) {
      this.header(value, where)
      return
    }
    if (!itemCheck.Check(value)) {
      this.report.addSchemaErrors(itemCheck.Errors(value), where)
      return
    }
    const item = value as JsonLinesItem
    if (this.listed !== null && !this.listed.has(item.language)) {
      this.report.add(`${where}language: ${preview(item.language)} is not one of the header's languages (${[...this.listed].join(', ')})`)
      return
    }
    // An item's index is its line number, so a repeat names the line of the first.
    const repeated = this.builder.add(item.language, at, item)
    if (repeated >= 0) this.report.add(`${where}pk: ${item.pk} repeats line ${repeated}`)
  }

  private header (value: object, where: string): void {
    if ('language' in value) {
      this.report.add(`${where}language: belongs on item lines; a header lists its languages in \`languages\``)
      return
    }
    if (!headerCheck.Check(value)) {
      this.report.addSchemaErrors(headerCheck.Errors(value), where)
      return
    }
    this.generatedAt = value.generated_at ?? null
    if (value.languages !== undefined) {
      this.listed = new Set(value.languages)
      // Languages the header lists are served, those without items too (count 0).
      for (const code of value.languages) this.builder.language(code)
    }
  }

  async finish (file: string, options: LoadOptions): Promise<SnapshotModel> {
    if (!this.content && this.report.problems.length === 0) {
      this.report.add(this.number === 0 ? 'the file is empty' : 'the file has no line but blank ones')
    } else if (this.report.problems.length === 0 && this.builder.languageCount === 0) {
      this.report.add(`${this.name}: names no language: a header with \`languages\`, or at least one item, is needed`)
    }
    if (this.report.problems.length > 0) throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, this.report.lines())
    return await this.builder.buildInSlices({
      source: file,
      version: this.hash.digest('base64url'),
      generatedAt: this.generatedAt,
      loadedAt: (options.now ?? (() => new Date()))()
    })
  }
}

function isBlank (line: Buffer): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09) return false
  }
  return true
}
