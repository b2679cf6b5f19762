// One batch of items parsed, checked and rendered, on a pool thread or the loading thread (ADR 021).
import { isUtf8 } from 'node:buffer'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { ValueError } from '@sinclair/typebox/errors'
import '../../schemas/formats.js'
import { JsonLinesItemSchema, SnapshotItemSchema, type SnapshotItem } from '../../schemas/snapshot.js'
import { ChangeDeleteSchema } from '../../schemas/change-file.js'
import { describeLineSyntaxError, findValue, locateSyntaxError, startsWithBom } from './json-text.js'
import { NEWLINE, countCharacters, positionAfter, type TextPosition } from './text-position.js'
import { escapePointer, jsonPath, preview, schemaProblems } from './validation-report.js'
import { ItemBytes } from '../model/item-bytes.js'
import { fillRow, type ItemPlace } from '../model/version-arrays.js'
import type { RenderedItems } from '../model/build-model.js'
import { MAX_VALUE_NESTING } from './stream-document.js'

// Served as given: JSON.parse reads 200,000 levels but serializing overflows the stack, so depth is capped.
const ANY_SHAPED = ['series', 'company_response_responded', 'responded_to_article'] as const

/** The loader asks it too, of a header that came too late. */
export const lineCheck = TypeCompiler.Compile(JsonLinesItemSchema)
const itemCheck = TypeCompiler.Compile(SnapshotItemSchema)
const deleteCheck = TypeCompiler.Compile(ChangeDeleteSchema)

/** `at`: number in the batch; a place (v1 `position`, JSON Lines `column`) only when not the item's (ADR 021). */
export interface BatchProblem {
  at: number
  text: string
  position?: TextPosition
  column?: number
}

type Place = Pick<BatchProblem, 'position' | 'column'>

export interface ParsedBatch extends RenderedItems {
  /** Lines (JSON Lines) or items (format v1). */
  count: number
  /** Each item's JSON and a comma, in a SharedArrayBuffer of its own: one of the model's chunks. */
  bytes: Uint8Array
  /** From 1 (the line, for JSON Lines). */
  at: number[]
  language: number[]
  languages: string[]
  /** A line's follow the loader's `file:line: `; an item's start with its path. */
  problems: BatchProblem[]
  /** JSON Lines: a first value that looks like a header; the file's only if no earlier batch held a value. */
  header: { at: number, value: Record<string, unknown> } | null
  /** No header may come after a value. */
  content: boolean
  /** 0: none. A change file's must be its header. */
  firstValueAt: number
  deletes: ChangeDelete[]
  /** The bytes sent, handed back for a later batch to reuse (ADR 010). */
  read: Uint8Array
}

export interface ChangeDelete {
  at: number
  language: string
  pk: number
}

/** Whole lines; `first`: starts the file (a byte order mark allowed); `changes`: a change file's. */
export interface LinesTask {
  kind: 'lines'
  bytes: Uint8Array
  first: boolean
  changes?: boolean
}

/** Format v1: items back to back, item i ending at `ends[i]`. */
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

/** `scratch`: one per thread, copied out after each batch. */
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
    // UTF-8 was checked as the document was read (read-document.ts).
    const json = text.toString('utf8', i === 0 ? 0 : ends[i - 1], ends[i])
    try {
      item = JSON.parse(json)
    } catch (error) {
      // Located again (error path only) for a message the same on every Node.
      const { what, position } = locateSyntaxError(json, error, itemStart(task, i))
      batch.problem(i + 1, `${jsonPath(itemPointer(task, i))}: not valid JSON: ${what}`, { position })
      continue
    }
    // Places are looked for only in failing items (ADR 021).
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

/** E.g. `/languages/en/41`. */
function itemPointer (task: ItemsTask, i: number): string {
  return `/languages/${escapePointer(task.languages[task.language[i] as number] as string)}/${task.index[i] as number}`
}

function itemBytes (text: Buffer, ends: number[], i: number): Buffer {
  return text.subarray(i === 0 ? 0 : ends[i - 1], ends[i])
}

function itemStart (task: ItemsTask, i: number): TextPosition {
  return { line: task.line[i] as number, column: task.column[i] as number }
}

/** Error path only. A missing field's is its object's; JSON Lines has none for the item itself (the line names it). */
function placeOf (bytes: Buffer, pointer: string, start: TextPosition | null): Place {
  const { offset, depth } = findValue(bytes, pointer)
  if (start !== null) return { position: positionAfter(start, bytes.subarray(0, offset)) }
  return depth === 0 ? {} : { column: 1 + countCharacters(bytes, 0, offset) }
}

/** Items carry a number, the batch each code once. */
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

  get codes (): string[] {
    return [...this.numbers.keys()]
  }
}

/** The batch's items as ParsedBatch sends them: each one's row, number, language and companies. */
class BatchItems implements RenderedItems {
  readonly rows: number[] = []
  readonly at: number[] = []
  readonly language: number[] = []
  readonly languages = new LanguageNumbers()
  readonly companyEnd: number[] = []
  readonly companies: number[] = []

  add (item: SnapshotItem, language: string, at: number, place: ItemPlace): void {
    fillRow(this.rows, item, place)
    this.at.push(at)
    this.language.push(this.languages.of(language))
    for (const company of item.companies) this.companies.push(company)
    this.companyEnd.push(this.companies.length)
  }
}

class BatchCollector {
  private readonly items = new BatchItems()
  private readonly problems: BatchProblem[] = []
  header: ParsedBatch['header'] = null
  content = false
  firstValueAt = 0
  readonly deletes: ChangeDelete[] = []

  constructor (private readonly read: Uint8Array, private readonly bytes: ItemBytes) {}

  /** Returns the field nested too deep, if any, without adding the item: the caller says where. */
  item (item: SnapshotItem, language: string, at: number): string | null {
    const deep = tooDeepField(item)
    if (deep !== null) return deep
    const start = this.bytes.write(item)
    this.items.add(item, language, at, { chunk: 0, start, length: this.bytes.lastLength })
    return null
  }

  problem (at: number, text: string, place: Place = {}): void {
    this.problems.push({ at, text, ...place })
  }

  /** One problem a path. `start`: the v1 item's place in the file, null for a JSON Lines line. */
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
      rows: this.items.rows,
      at: this.items.at,
      language: this.items.language,
      languages: this.items.languages.codes,
      companyEnd: this.items.companyEnd,
      companies: this.items.companies,
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
    // An item may carry `snapshot` too, hence `pk`; a `changes` header lets the framing name a change file.
    if (first && ('snapshot' in value || 'changes' in value) && !('pk' in value)) {
      this.header = { at, value: value as Record<string, unknown> }
      return
    }
    this.itemLine(value, line, at)
  }

  /** A change file's `upsert` line too. */
  private itemLine (value: object, line: Buffer, at: number): void {
    if (!lineCheck.Check(value)) {
      this.invalid(at, lineCheck.Errors(value), line, null)
      return
    }
    const deep = this.item(value, value.language, at)
    if (deep !== null) this.problem(at, tooDeep(`/${deep}`), placeOf(line, `/${deep}`, null))
  }

  private changeLine (value: Record<string, unknown>, line: Buffer, at: number, first: boolean): void {
    // A snapshot's header too: the framing, which knows whether it is the file's first, judges it.
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

function tooDeepField (item: SnapshotItem): string | null {
  for (const field of ANY_SHAPED) {
    if (depthOver(item[field], MAX_VALUE_NESTING - 1)) return field
  }
  return null
}

function tooDeep (pointer: string): string {
  return `${jsonPath(pointer)}: nested deeper than ${MAX_VALUE_NESTING} levels (the item counted)`
}

// Without recursion: the value may be deeper than the stack.
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

/** Bytes that crossed a thread seen as a Buffer again, not copied. */
export function asBuffer (bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
