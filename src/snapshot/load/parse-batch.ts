// One batch of items checked and rendered (JSON.parse, the item schema, serializing): on a pool thread for a
// large file, else on the loading thread. Items are numbered within the batch; the merge places them (ADR 021).
import { isUtf8 } from 'node:buffer'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { ValueError } from '@sinclair/typebox/errors'
import '../../schemas/formats.js'
import { JsonLinesItemSchema, SnapshotItemSchema, type SnapshotItem } from '../../schemas/snapshot.js'
import { ChangeDeleteSchema } from '../../schemas/change-file.js'
import { describeLineSyntaxError, findValue, locateSyntaxError, startsWithBom } from './json-text.js'
import { NEWLINE, countCharacters, positionAfter, type TextPosition } from './text-position.js'
import { escapePointer, jsonPath, preview, schemaProblems } from './validation-report.js'
import { ItemBytes, dateKey } from '../model/item-bytes.js'
import type { RenderedItems } from '../model/build-model.js'
import { MAX_VALUE_NESTING } from './stream-document.js'

/**
 * Values served as given, of any shape: JSON.parse reads 200,000 levels, but serializing overflows the stack.
 * An item may nest MAX_VALUE_NESTING levels; format v1's streamer refuses more as it reads, JSON Lines here.
 */
const ANY_SHAPED = ['series', 'company_response_responded', 'responded_to_article'] as const

/** A JSON Lines item line's check (the loader asks it too, of a header that came too late). */
export const lineCheck = TypeCompiler.Compile(JsonLinesItemSchema)
const itemCheck = TypeCompiler.Compile(SnapshotItemSchema)
const deleteCheck = TypeCompiler.Compile(ChangeDeleteSchema)

/**
 * A line's or item's problem: `at` its number in the batch. Its own place, when it has one: `position` in the
 * file (format v1), or `column` of its line (JSON Lines); else the item's (ADR 021).
 */
export interface BatchProblem {
  at: number
  text: string
  position?: TextPosition
  column?: number
}

/** Where a problem of an item is, when not where the item is: a BatchProblem's place. */
type Place = Pick<BatchProblem, 'position' | 'column'>

/** A batch checked, and its items rendered: what a parse thread sends back. */
export interface ParsedBatch extends RenderedItems {
  /** Lines (JSON Lines) or items (format v1) in the batch. */
  count: number
  /** The items' JSON, each followed by a comma, in a SharedArrayBuffer of its own: one of the model's chunks. */
  bytes: Uint8Array
  /** Each item's number in the batch (its line, for JSON Lines), from 1. */
  at: number[]
  /** Each item's language, as its place in `languages`. */
  language: number[]
  languages: string[]
  /** The batch's problems, in order: a line's follow the loader's `file:line: `; an item's start with its path. */
  problems: BatchProblem[]
  /**
   * JSON Lines: the first JSON value, when it looks like a header (`snapshot` or `changes`, no `pk`, or for a
   * change file no `op`); not checked as an item. The file's header only if no earlier batch held a value.
   */
  header: { at: number, value: Record<string, unknown> } | null
  /** Whether a line of the batch held a JSON value (no header may come after one). */
  content: boolean
  /** The line of the batch's first JSON value (0: none): a change file's must be its header. */
  firstValueAt: number
  /** A change file's `delete` lines, checked, in order (empty for a snapshot). */
  deletes: ChangeDelete[]
  /** The batch's bytes as sent, handed back: the loader reads a later batch into their memory (ADR 010). */
  read: Uint8Array
}

/** A change file's `delete` line: `at` its number in the batch. */
export interface ChangeDelete {
  at: number
  language: string
  pk: number
}

/** A JSON Lines batch of whole lines; `first`: it starts the file (a byte order mark allowed); `changes`: ops. */
export interface LinesTask {
  kind: 'lines'
  bytes: Uint8Array
  first: boolean
  changes?: boolean
}

/** A format v1 batch: items' bytes back to back, item i ending at `ends[i]`, with its index and place in the file. */
export interface ItemsTask {
  kind: 'items'
  bytes: Uint8Array
  ends: number[]
  language: number[]
  languages: string[]
  index: number[]
  line: number[]
  column: number[]
}

export type BatchTask = LinesTask | ItemsTask

/** Checks and renders a batch into `scratch`, one for all of a thread's batches, copied out at the end of each. */
export function parseBatch (task: BatchTask, scratch: ItemBytes): ParsedBatch {
  return task.kind === 'lines' ? parseLines(task, scratch) : parseItems(task, scratch)
}

function parseLines (task: LinesTask, scratch: ItemBytes): ParsedBatch {
  const text = asBuffer(task.bytes)
  const batch = new LineBatch(task, scratch)
  let line = 0
  let start = 0
  for (let end = text.indexOf(NEWLINE); end !== -1; end = text.indexOf(NEWLINE, start)) {
    batch.readLine(text.subarray(start, end), ++line)
    start = end + 1
  }
  // The last line of the file may have no `\n`.
  if (start < text.length) batch.readLine(text.subarray(start), ++line)
  return batch.finish(line)
}

function parseItems (task: ItemsTask, scratch: ItemBytes): ParsedBatch {
  const { ends } = task
  const text = asBuffer(task.bytes)
  const batch = new BatchCollector(task.bytes, scratch)
  for (let i = 0; i < ends.length; i++) {
    const language = task.languages[task.language[i] as number] as string
    let item: unknown
    // The document's UTF-8 was checked as it was read (read-document.ts).
    const json = text.toString('utf8', i === 0 ? 0 : ends[i - 1], ends[i])
    try {
      item = JSON.parse(json)
    } catch (error) {
      // Found again where it is, with a message that reads the same on every Node (the error path only).
      const { what, position } = locateSyntaxError(json, error, itemStart(task, i))
      batch.problem(i + 1, `${jsonPath(itemPointer(task, i))}: not valid JSON: ${what}`, { position })
      continue
    }
    // A problem's place is found again in the item's bytes, for an item with one only (ADR 021).
    if (!itemCheck.Check(item)) {
      batch.invalid(i + 1, itemCheck.Errors(item), itemBytes(text, ends, i), itemStart(task, i), itemPointer(task, i))
      continue
    }
    const deep = batch.item(item, language, i + 1)
    if (deep !== null) {
      const place = placeOf(itemBytes(text, ends, i), `/${deep}`, itemStart(task, i))
      batch.problem(i + 1, tooDeep(`${itemPointer(task, i)}/${deep}`), place)
    }
  }
  return batch.finish(ends.length)
}

/** Format v1 item `i`'s JSON Pointer in the file (`/languages/en/41`), for its problems. */
function itemPointer (task: ItemsTask, i: number): string {
  return `/languages/${escapePointer(task.languages[task.language[i] as number] as string)}/${task.index[i] as number}`
}

/** Format v1 item `i`'s bytes in the batch's `text`. */
function itemBytes (text: Buffer, ends: number[], i: number): Buffer {
  return text.subarray(i === 0 ? 0 : ends[i - 1], ends[i])
}

/** Where format v1 item `i` of the task starts in the file. */
function itemStart (task: ItemsTask, i: number): TextPosition {
  return { line: task.line[i] as number, column: task.column[i] as number }
}

/**
 * The place of the value at `pointer` in an item's `bytes` (a missing field's: its object's), read again on
 * the error path only. Format v1 (`start`: where the item starts): its line and column in the file; JSON
 * Lines: its column, or none when it is the item itself, which the line names.
 */
function placeOf (bytes: Buffer, pointer: string, start: TextPosition | null): Place {
  const { offset, depth } = findValue(bytes, pointer)
  if (start !== null) return { position: positionAfter(start, bytes.subarray(0, offset)) }
  return depth === 0 ? {} : { column: 1 + countCharacters(bytes, 0, offset) }
}

/** A batch's languages, numbered as they first appear: each item carries a number, the batch the codes once. */
export class LanguageNumbers {
  private readonly numbers = new Map<string, number>()

  of (language: string): number {
    let number = this.numbers.get(language)
    if (number === undefined) {
      number = this.numbers.size
      this.numbers.set(language, number)
    }
    return number
  }

  /** The codes, by number. */
  get codes (): string[] {
    return [...this.numbers.keys()]
  }
}

/** A batch's results as they are found: its items' bytes and columns, and its problems. */
class BatchCollector {
  private readonly start: number[] = []
  private readonly length: number[] = []
  private readonly date: number[] = []
  private readonly pk: number[] = []
  private readonly at: number[] = []
  private readonly language: number[] = []
  private readonly languages = new LanguageNumbers()
  private readonly companyEnd: number[] = []
  private readonly companies: number[] = []
  private readonly problems: BatchProblem[] = []
  header: ParsedBatch['header'] = null
  content = false
  firstValueAt = 0
  readonly deletes: ChangeDelete[] = []

  constructor (private readonly read: Uint8Array, private readonly bytes: ItemBytes) {}

  /** Adds a checked item; or returns the served field nested too deep (not added: the caller says where). */
  item (item: SnapshotItem, language: string, at: number): string | null {
    const deep = tooDeepField(item)
    if (deep !== null) return deep
    this.start.push(this.bytes.write(item))
    this.length.push(this.bytes.lastLength)
    this.date.push(dateKey(item.backdate))
    this.pk.push(item.pk)
    this.at.push(at)
    this.language.push(this.languages.of(language))
    for (const company of item.companies) this.companies.push(company)
    this.companyEnd.push(this.companies.length)
    return null
  }

  problem (at: number, text: string, place: Place = {}): void {
    this.problems.push({ at, text, ...place })
  }

  /**
   * A failed check's problems, one a path, each at its value's place in the item's `bytes` (`start`: where
   * they start in a format v1 file; null for a JSON Lines line). `pointer`: the item's, in a v1 document.
   */
  invalid (
    at: number, errors: Iterable<ValueError>, bytes: Buffer, start: TextPosition | null, pointer?: string
  ): void {
    for (const { line, repeat, within } of schemaProblems(errors, pointer)) {
      if (!repeat) this.problem(at, line, placeOf(bytes, within, start))
    }
  }

  finish (count: number): ParsedBatch {
    return {
      count,
      bytes: this.bytes.take(),
      start: this.start,
      length: this.length,
      date: this.date,
      pk: this.pk,
      at: this.at,
      language: this.language,
      languages: this.languages.codes,
      companyEnd: this.companyEnd,
      companies: this.companies,
      problems: this.problems,
      header: this.header,
      content: this.content,
      firstValueAt: this.firstValueAt,
      deletes: this.deletes,
      read: this.read
    }
  }
}

class LineBatch extends BatchCollector {
  private readonly first: boolean
  private readonly changes: boolean

  constructor (task: LinesTask, scratch: ItemBytes) {
    super(task.bytes, scratch)
    this.first = task.first
    this.changes = task.changes === true
  }

  readLine (bytes: Buffer, at: number): void {
    let line = bytes
    if (line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1)
    if (startsWithBom(line)) {
      if (!this.first || at !== 1) {
        this.problem(at, 'a byte order mark in the middle of the file (were files joined?)')
        return
      }
      line = line.subarray(3)
    }
    if (isBlank(line)) return
    if (!isUtf8(line)) {
      this.problem(at, 'not valid UTF-8 text')
      return
    }
    let value: unknown
    try {
      value = JSON.parse(line.toString('utf8'))
    } catch (error) {
      this.problem(at, `not valid JSON: ${describeLineSyntaxError(error as Error)}`)
      return
    }
    const first = !this.content
    this.content = true
    if (first) this.firstValueAt = at
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.problem(at, `expected a JSON object, got ${preview(value)}`)
      return
    }
    if (this.changes) {
      this.changeLine(value as Record<string, unknown>, line, at, first)
      return
    }
    // A header names the snapshot and is no item (an item may carry any extra field, `snapshot` too); a
    // change file's header makes the framing say the file is one.
    if (first && ('snapshot' in value || 'changes' in value) && !('pk' in value)) {
      this.header = { at, value: value as Record<string, unknown> }
      return
    }
    this.itemLine(value, line, at)
  }

  /** A snapshot's item line, or a change file's `upsert` line (the same line, with an `op`); `line`: its bytes. */
  private itemLine (value: object, line: Buffer, at: number): void {
    if (!lineCheck.Check(value)) {
      this.invalid(at, lineCheck.Errors(value), line, null)
      return
    }
    const deep = this.item(value, value.language, at)
    if (deep !== null) this.problem(at, tooDeep(`/${deep}`), placeOf(line, `/${deep}`, null))
  }

  /** A change file's line: its header (the first value), or an op; every other check is a snapshot line's. */
  private changeLine (value: Record<string, unknown>, line: Buffer, at: number, first: boolean): void {
    // A header (a snapshot's too: the framing says the file is one), judged by the framing, which knows
    // whether it is the file's first.
    if (first && ('changes' in value || 'snapshot' in value) && !('op' in value)) {
      this.header = { at, value }
      return
    }
    const { op } = value
    if (op === 'upsert') {
      this.itemLine(value, line, at)
    } else if (op === 'delete') {
      if (deleteCheck.Check(value)) this.deletes.push({ at, language: value.language, pk: value.pk })
      else this.invalid(at, deleteCheck.Errors(value), line, null)
    } else if (op === undefined) {
      this.problem(at, 'op: is required ("upsert" or "delete")')
    } else {
      this.problem(at, `op: ${preview(op)} is not "upsert" or "delete"`, placeOf(line, '/op', null))
    }
  }
}

function isBlank (line: Buffer): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09) return false
  }
  return true
}

/** A served value of any shape nested deeper than the limit: its field, else null. */
function tooDeepField (item: SnapshotItem): string | null {
  for (const field of ANY_SHAPED) {
    if (depthOver(item[field], MAX_VALUE_NESTING - 1)) return field
  }
  return null
}

/** The problem of the value at `pointer`, nested too deep. */
function tooDeep (pointer: string): string {
  return `${jsonPath(pointer)}: nested deeper than ${MAX_VALUE_NESTING} levels (the item counted)`
}

/** Whether `value` nests more than `limit` arrays and objects deep; walked without recursion. */
function depthOver (value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [next, depth] = stack.pop() as [unknown, number]
    if (depth > limit) return true
    for (const child of Object.values(next as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return false
}

/** Bytes that crossed a thread (a plain Uint8Array there) seen as a Buffer again, nothing copied. */
export function asBuffer (bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
