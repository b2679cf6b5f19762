// file → validate → index → immutable model. Reads a snapshot file (format v1, one JSON document, streamed
// through read-document.ts, its items found by stream-document.ts and checked in batches on parse threads,
// parse-batch.ts; a JSON Lines file goes to load-json-lines.ts) and either returns a SnapshotModel or
// throws a SnapshotError naming the file, the JSON path and the rule.
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { isUtf8 } from 'node:buffer'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../../schemas/formats.js'
import { LANGUAGE, SnapshotSchema, type Snapshot, type SnapshotItem } from '../../schemas/snapshot.js'
import { SnapshotError } from '../../errors.js'
import { SnapshotModelBuilder } from '../model/build-model.js'
import type { SnapshotInfo, SnapshotModel } from '../model/snapshot-model.js'
import { isJsonLinesPath, loadJsonLinesFile } from './load-json-lines.js'
import { describeReadError, describeSyntaxError, startsWithBom, type LoadOptions } from './load-options.js'
import { NotText, followDocument, readDocument } from './read-document.js'
import { NotFollowed } from './stream-document.js'
import { ValidationReport, escapePointer, jsonPath } from './validation-report.js'
import { LanguageNumbers, bytesOf, problemsInOrder, type ItemsTask, type ParsedBatch } from './parse-batch.js'
import { BatchMemory, INLINE_BATCH_BYTES, InlineParser, MergeQueue, parserFor, type BatchParser } from './parse-threads.js'

// Compiled once: checking 200k items is then a tight loop, not an interpretation of the schema. The item
// and top-level checks are parts of the one snapshot schema, not rules of their own.
const snapshotCheck = TypeCompiler.Compile(SnapshotSchema)
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
  let stopped: unknown = null
  let reader: DocumentReader | null = null
  let parser: BatchParser | null = null
  try {
    const load = parserFor((await stat(file)).size, options)
    parser = load.parser
    reader = new DocumentReader(file, options, parser, load.batchBytes)
    await readDocument(file, reader, options.readChunk)
    await reader.finish()
  } catch (error) {
    if (!(error instanceof NotFollowed || error instanceof NotText || error === REPORT_FULL)) {
      // Only the file system's errors are the file's; anything else is the service's, and not an editor's to read.
      if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error
      throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(error)])
    }
    stopped = error
    // The items found before the document stopped being followed, or stopped being text, are taken first:
    // a report they fill is the report, as it was when each item was taken as it was found.
    if (error !== REPORT_FULL && reader !== null && await reader.finishFills()) stopped = REPORT_FULL
  } finally {
    await parser?.close()
  }
  reader = reader as DocumentReader
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
    const reader = new DocumentReader(file, options, null, options.readChunk ?? INLINE_BATCH_BYTES)
    reader.chunk(raw)
    try {
      followDocument(raw, reader)
      reader.finishNow()
      if (reader.valid) return reader.builder.build(reader.info())
    } catch (error) {
      if (!(error instanceof NotFollowed || error instanceof NotText || error === REPORT_FULL)) throw error
    }
  }
  return loadWhole(raw, file, options)
}

/** Thrown by the reader to stop reading once the report is full. */
const REPORT_FULL = new Error('the report is full')

/**
 * Items' bytes gathered for the next batch, back to back, each with its language and its index in it: the
 * streamer finds them, a parse thread parses them (parse-batch.ts).
 */
class ItemBatcher {
  private buffer: Buffer = Buffer.alloc(0)
  private used = 0
  private ends: number[] = []
  private language: number[] = []
  private languages = new LanguageNumbers()
  private index: number[] = []

  constructor (private readonly batchBytes: number, private readonly memory: BatchMemory) {}

  get size (): number {
    return this.ends.length
  }

  /** False when the item does not fit: the batch is to be sent, and the item added to the next. */
  add (language: string, index: number, bytes: Buffer): boolean {
    if (this.used + bytes.length > this.buffer.length) {
      if (this.ends.length > 0) return false
      this.buffer = this.memory.take(Math.max(this.batchBytes, bytes.length))
    }
    bytes.copy(this.buffer, this.used)
    this.used += bytes.length
    this.ends.push(this.used)
    this.language.push(this.languages.of(language))
    this.index.push(index)
    return true
  }

  take (): ItemsTask {
    const task: ItemsTask = { kind: 'items', bytes: this.buffer.subarray(0, this.used), ends: this.ends, language: this.language, languages: this.languages.codes, index: this.index }
    this.buffer = Buffer.alloc(0)
    this.used = 0
    this.ends = []
    this.language = []
    this.languages = new LanguageNumbers()
    this.index = []
    return task
  }
}

/**
 * The state of one streamed read: the digest, the builder, what the items' problems are so far. Items go
 * to the parser in batches; batches and the top-level members' effects are taken in document order, so the
 * report lists problems as the document has them. Without a parser (`null`), every batch is parsed at once,
 * on this thread (a document parsed from memory).
 */
class DocumentReader {
  private readonly hash = createHash('sha1')
  readonly builder = new SnapshotModelBuilder()
  private readonly report: ValidationReport
  private generatedAt: string | null = null
  private topProblem: string | null = null
  private readonly memory: BatchMemory
  private readonly batcher: ItemBatcher
  /** Batches in flight and the members' effects behind them, taken in the document's order. */
  private readonly queue: MergeQueue
  private readonly inline = new InlineParser()

  constructor (private readonly file: string, private readonly options: LoadOptions, private readonly parser: BatchParser | null, batchBytes: number) {
    this.report = new ValidationReport(options.problemCap)
    this.memory = new BatchMemory(batchBytes)
    this.batcher = new ItemBatcher(batchBytes, this.memory)
    this.queue = new MergeQueue(this.memory)
  }

  get valid (): boolean {
    return this.report.problems.length === 0 && this.topProblem === null && this.builder.languageCount > 0
  }

  info (): SnapshotInfo {
    return { source: this.file, version: this.hash.digest('base64url'), generatedAt: this.generatedAt, loadedAt: (this.options.now ?? (() => new Date()))() }
  }

  // Arrow functions: the streamer calls them as handlers.
  readonly chunk = (bytes: Buffer): void => { this.hash.update(bytes) }

  /** After each chunk read: holds the reading while as many batches are in flight as the parser wants. */
  readonly drain = (): Promise<void> | undefined => {
    if (this.parser === null || this.queue.length < this.parser.depth) return undefined
    return this.queue.mergeUntil(this.parser.depth - 1).then(() => {})
  }

  readonly member = (key: string, value: Buffer): void => {
    // Parsed now (the bytes are the streamer's until this returns); reported in its place among the items.
    let parsed: unknown
    let error: Error | null = null
    try {
      parsed = JSON.parse(value.toString('utf8'))
    } catch (thrown) {
      error = thrown as Error
    }
    this.inOrder(() => {
      // Any other member is allowed, but it must be JSON too.
      if (error !== null) {
        this.problem(`${jsonPath(`/${escapePointer(key)}`)}: not valid JSON: ${describeSyntaxError(error, null)}`)
        return
      }
      if (key !== 'generated_at') return
      if (!generatedAtCheck.Check({ generated_at: parsed })) {
        this.report.addSchemaErrors(generatedAtCheck.Errors({ generated_at: parsed }))
        this.stopWhenFull()
        return
      }
      this.generatedAt = parsed as string
    })
  }

  readonly language = (code: string): void => {
    // In its place too: the items before a bad language code are indexed (and their repeats found) first.
    this.inOrder(() => {
      if (!LANGUAGE.test(code)) {
        this.topProblem ??= `${jsonPath(`/languages/${escapePointer(code)}`)}: not a language code`
        return
      }
      this.builder.language(code)
    })
  }

  readonly item = (language: string, index: number, bytes: Buffer): void => {
    if (this.batcher.add(language, index, bytes)) return
    this.send()
    this.batcher.add(language, index, bytes)
  }

  /** After the document: the last batch sent, and every step taken. Throws REPORT_FULL. */
  async finish (): Promise<void> {
    this.send()
    await this.queue.mergeUntil(0)
  }

  /** `finish` after the read stopped for another reason: true when what was left fills the report. */
  async finishFills (): Promise<boolean> {
    try {
      await this.finish()
    } catch (error) {
      if (error === REPORT_FULL) return true
      throw error
    }
    return false
  }

  /** `finish` without a parser: nothing is left in flight. */
  finishNow (): void {
    this.send()
  }

  /** The report of a file too large to be parsed whole: the items' problems, then what stopped the read. */
  problems (stopped: unknown): string[] {
    const lines = this.report.lines()
    if (this.topProblem !== null) lines.unshift(this.topProblem)
    if (stopped instanceof NotFollowed) lines.push(`not a snapshot document: ${stopped.message}`)
    if (lines.length === 0) lines.push('languages: must name at least one language')
    return lines
  }

  /** Runs `effect` after the items before it: now if none is left to merge. */
  private inOrder (effect: () => void): void {
    this.send()
    this.queue.effect(effect)
  }

  /** Sends the items gathered so far to be parsed; without a parser, parses and merges them now. */
  private send (): void {
    if (this.batcher.size === 0) return
    const task = this.batcher.take()
    if (this.parser === null) {
      const batch = this.inline.parseNow(task)
      this.memory.give(batch.read)
      this.merge(task, batch)
      return
    }
    this.queue.batch(this.parser.parse(task), batch => this.merge(task, batch))
  }

  /** A parsed batch's items into the builder and its problems into the report, in the document's order. */
  private merge (task: ItemsTask, batch: ParsedBatch): undefined {
    const chunk = this.builder.chunk(bytesOf(batch))
    const problemsBefore = problemsInOrder(batch, ({ text }) => this.problem(text))
    for (let i = 0; i < batch.at.length; i++) {
      const at = batch.at[i] as number
      problemsBefore(at)
      if (this.topProblem !== null || this.report.problems.length > 0) continue
      const language = batch.languages[batch.language[i] as number] as string
      const index = task.index[at - 1] as number
      const first = this.builder.addRendered(language, index, batch, i, chunk)
      if (first >= 0) {
        const where = `/languages/${escapePointer(language)}`
        this.problem(`${jsonPath(`${where}/${index}/pk`)}: ${batch.pk[i] as number} repeats ${jsonPath(`${where}/${first}`)}`)
      }
    }
    problemsBefore(Infinity)
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
