// file → validate → index → immutable model, for JSON Lines snapshots (contract §1: `.jsonl`, `.ndjson`):
// an optional header line, then one item per line with its `language`. The file is read in batches of whole
// lines, never held whole, and digested as it is read; each batch is checked and rendered on a parse thread
// (parse-threads.ts, parse-batch.ts), and the batches are merged here in file order, so every problem is
// reported with its line number, in the order of the lines.
import { createHash } from 'node:crypto'
import { open, type FileHandle } from 'node:fs/promises'
import { basename } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../../schemas/formats.js'
import { JsonLinesHeaderSchema } from '../../schemas/snapshot.js'
import { SnapshotError } from '../../errors.js'
import { SnapshotModelBuilder } from '../model/build-model.js'
import { describeReadError, type LoadOptions } from './load-options.js'
import { LineTooLong, MAX_LINE_BYTES, NEWLINE } from './read-lines.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import { ValidationReport, preview } from './validation-report.js'
import { bytesOf, lineCheck, problemsInOrder, type ParsedBatch } from './parse-batch.js'
import { BatchMemory, MergeQueue, parserFor, type BatchParser } from './parse-threads.js'

const headerCheck = TypeCompiler.Compile(JsonLinesHeaderSchema)

/** True when the file name says JSON Lines. */
export function isJsonLinesPath (file: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(file)
}

/** Reads and validates a JSON Lines snapshot. Throws SnapshotError, never anything else, for a bad file. */
export async function loadJsonLinesFile (file: string, options: LoadOptions = {}): Promise<SnapshotModel> {
  const name = basename(file)
  const reader = new LineReader(name, options)
  let handle: FileHandle | null = null
  let parser: BatchParser | null = null
  try {
    handle = await open(file, 'r')
    const load = parserFor((await handle.stat()).size, options)
    parser = load.parser
    await readBatches(handle, reader, parser, load.batchBytes, options.maxLineBytes ?? MAX_LINE_BYTES)
  } catch (error) {
    if (error instanceof LineTooLong) {
      throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, [`${name}:${error.number}: ${error.message}: is it one JSON document named .jsonl?`])
    }
    // Only the file system's errors are the file's; anything else is the service's, and not an editor's to read.
    if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error
    throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(error)])
  } finally {
    await parser?.close()
    await handle?.close().catch(() => {})
  }
  return await reader.finish(file, options)
}

/**
 * Reads the file in batches of whole lines (a line cut by a read is carried into the next batch), hands each
 * to the parser, and merges the parsed batches in file order, with `depth` batches in flight.
 */
async function readBatches (handle: FileHandle, reader: LineReader, parser: BatchParser, batchBytes: number, maxLineBytes: number): Promise<void> {
  const memory = new BatchMemory(batchBytes)
  // A merge returns false once the report is full: reading stops there, and the report says so.
  const queue = new MergeQueue(memory)
  const merge = (batch: ParsedBatch): boolean => reader.merge(batch)
  /** The start of a line that the reads so far have not ended: in a buffer of its own, or in the last read's. */
  let carry: Buffer | null = null
  let carryInRead = false
  let first = true
  for (;;) {
    const carried: number = carry?.length ?? 0
    // A long line doubles the read rather than being copied again at every read, but a line longer than
    // allowed is caught within a batch of its limit, as it was when every read was a batch.
    const want = Math.max(batchBytes, Math.min(carried, maxLineBytes + 1 - carried))
    // Memory of its own for every batch in flight: it moves to the thread that parses it.
    const buffer = memory.take(carried + want)
    if (carry !== null) {
      carry.copy(buffer)
      if (carryInRead) memory.give(carry)
    }
    const { bytesRead } = await handle.read(buffer, carried, want, null)
    if (bytesRead === 0) break
    reader.digest(buffer.subarray(carried, carried + bytesRead))
    const filled: number = carried + bytesRead
    const cut: number = buffer.lastIndexOf(NEWLINE, filled - 1)
    carryInRead = cut === -1
    // Copied out before the buffer moves.
    carry = cut === -1 ? buffer.subarray(0, filled) : cut + 1 < filled ? ownCopy(buffer.subarray(cut + 1, filled)) : null
    if (cut !== -1) {
      queue.batch(parser.parse({ kind: 'lines', bytes: buffer.subarray(0, cut + 1), first }), merge)
      first = false
    }
    if ((carry?.length ?? 0) > maxLineBytes) {
      // Its number is known once every line before it is counted (and a report they fill comes first).
      if (!await queue.mergeUntil(0)) return
      throw new LineTooLong(reader.lines + 1, maxLineBytes)
    }
    if (!await queue.mergeUntil(parser.depth - 1)) return
  }
  // The last line, without its `\n`.
  if (carry !== null) queue.batch(parser.parse({ kind: 'lines', bytes: carry, first }), merge)
  await queue.mergeUntil(0)
}

/** Bytes copied into an ArrayBuffer of their own (Buffer.from may copy a few bytes into Node's shared pool). */
function ownCopy (bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length)
  bytes.copy(copy)
  return copy
}

/** The state of one read: the header, the builder, the report, the digest and how many lines are merged. */
class LineReader {
  private readonly hash = createHash('sha1')
  private readonly builder = new SnapshotModelBuilder()
  private readonly report: ValidationReport
  /** Lines merged so far: the last batch merged ends at this line. */
  lines = 0
  /** Whether a line merged so far held a JSON value. */
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

  /**
   * Merges the next batch of the file: its problems, and those found only here (a repeated pk, a language
   * the header does not list), go into the report in line order. False once the report is full.
   */
  merge (batch: ParsedBatch): boolean {
    const base = this.lines
    const problemsBefore = problemsInOrder(batch, ({ at, text }) => this.report.add(`${this.name}:${base + at}: ${text}`))
    if (batch.header !== null) {
      problemsBefore(batch.header.at)
      const where = `${this.name}:${base + batch.header.at}: `
      // A header only as the file's first JSON value; later, it is an item without a pk.
      if (this.content) this.report.addSchemaErrors(lineCheck.Errors(batch.header.value), where)
      else this.header(batch.header.value, where)
    }
    this.content ||= batch.content
    const chunk = this.builder.chunk(bytesOf(batch))
    for (let i = 0; i < batch.at.length; i++) {
      const line = batch.at[i] as number
      problemsBefore(line)
      const at = base + line
      const language = batch.languages[batch.language[i] as number] as string
      if (this.listed !== null && !this.listed.has(language)) {
        this.report.add(`${this.name}:${at}: language: ${preview(language)} is not one of the header's languages (${[...this.listed].join(', ')})`)
        continue
      }
      // An item's index is its line number, so a repeat names the line of the first.
      const repeated = this.builder.addRendered(language, at, batch, i, chunk)
      if (repeated >= 0) this.report.add(`${this.name}:${at}: pk: ${batch.pk[i] as number} repeats line ${repeated}`)
    }
    problemsBefore(Infinity)
    this.lines += batch.count
    if (!this.report.full) return true
    this.report.truncated = true
    return false
  }

  private header (value: Record<string, unknown>, where: string): void {
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
      this.report.add(this.lines === 0 ? 'the file is empty' : 'the file has no line but blank ones')
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
