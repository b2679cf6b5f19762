// One batch of a JSON Lines snapshot's lines, checked and rendered: the per-line work of a load (UTF-8 check,
// JSON.parse, the item schema, serializing), done on a parse thread (parse-threads.ts) for a large file, on
// the loading thread for a small one. Lines are numbered within the batch: only the loader
// (load-json-lines.ts) knows where a batch starts, and it merges the batches in file order, where a repeated
// pk, a header and the header's languages are judged.
import { isUtf8 } from 'node:buffer'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../schemas/formats.js'
import { JsonLinesItemSchema, type JsonLinesItem } from '../schemas/snapshot.js'
import { describeSyntaxError, startsWithBom } from './load-options.js'
import { preview, schemaProblems } from './validation-report.js'
import { ItemBytes, dateKey } from './item-bytes.js'
import type { RenderedItems } from './build-model.js'

const itemCheck = TypeCompiler.Compile(JsonLinesItemSchema)
const NEWLINE = 0x0a

/** What is wrong with a line: `text` follows the `file:line: ` the loader writes before it. */
export interface LineProblem {
  line: number
  text: string
}

/** A batch's lines, checked, and its items rendered: what a parse thread sends back. */
export interface ParsedLines extends RenderedItems {
  /** Lines in the batch. */
  lines: number
  /** The items' JSON, each followed by a comma: an ArrayBuffer of its own, to become one of the model's chunks. */
  bytes: Uint8Array
  /** Each item's line in the batch, from 1. */
  line: number[]
  /** Each item's language, as its place in `languages`. */
  language: number[]
  languages: string[]
  /** The batch's problems, in line order. */
  problems: LineProblem[]
  /**
   * The batch's first JSON value, when it looks like a header (a `snapshot`, no `pk`); not checked as an
   * item. It is the file's header only if no line before the batch held a JSON value: the loader decides.
   */
  header: { line: number, value: Record<string, unknown> } | null
  /** Whether a line of the batch held a JSON value (no header may come after one). */
  content: boolean
  /** The batch's lines as they were sent, handed back: the loader reads a later batch into their memory. */
  read: Uint8Array
}

/**
 * Checks and renders a batch of whole lines (the last one's `\n` may be missing at the end of the file).
 * `first`: the batch starts the file, where a byte order mark is allowed. The items are rendered into
 * `scratch`, one for all of a thread's batches, and copied out at the end of each.
 */
export function parseLines (bytes: Uint8Array, first: boolean, scratch: ItemBytes): ParsedLines {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const batch = new LineBatch(bytes, first, scratch)
  let line = 0
  let start = 0
  for (let end = text.indexOf(NEWLINE); end !== -1; end = text.indexOf(NEWLINE, start)) {
    batch.readLine(text.subarray(start, end), ++line)
    start = end + 1
  }
  if (start < text.length) batch.readLine(text.subarray(start), ++line)
  return batch.finish(line)
}

class LineBatch {
  private readonly start: number[] = []
  private readonly length: number[] = []
  private readonly date: number[] = []
  private readonly pk: number[] = []
  private readonly line: number[] = []
  private readonly language: number[] = []
  private readonly languages = new Map<string, number>()
  private readonly companyEnd: number[] = []
  private readonly companies: number[] = []
  private readonly problems: LineProblem[] = []
  private header: ParsedLines['header'] = null
  private content = false

  constructor (private readonly read: Uint8Array, private readonly first: boolean, private readonly bytes: ItemBytes) {}

  readLine (bytes: Buffer, at: number): void {
    let line = bytes
    if (line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1)
    // Some editors start UTF-8 files with a byte order mark.
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
      this.problem(at, `not valid JSON: ${describeSyntaxError(error as Error, null)}`)
      return
    }
    const first = !this.content
    this.content = true
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.problem(at, `expected a JSON object, got ${preview(value)}`)
      return
    }
    // A header names the snapshot and is no item (an item may carry any extra field, `snapshot` too).
    if (first && 'snapshot' in value && !('pk' in value)) {
      this.header = { line: at, value: value as Record<string, unknown> }
      return
    }
    if (!itemCheck.Check(value)) {
      for (const { line } of schemaProblems(itemCheck.Errors(value))) this.problem(at, line)
      return
    }
    this.item(value, at)
  }

  private item (item: JsonLinesItem, at: number): void {
    this.start.push(this.bytes.write(item))
    this.length.push(this.bytes.lastLength)
    this.date.push(dateKey(item.backdate))
    this.pk.push(item.pk)
    this.line.push(at)
    let language = this.languages.get(item.language)
    if (language === undefined) {
      language = this.languages.size
      this.languages.set(item.language, language)
    }
    this.language.push(language)
    for (const company of item.companies) this.companies.push(company)
    this.companyEnd.push(this.companies.length)
  }

  private problem (line: number, text: string): void {
    this.problems.push({ line, text })
  }

  finish (lines: number): ParsedLines {
    return {
      lines,
      bytes: this.bytes.take(),
      start: this.start,
      length: this.length,
      date: this.date,
      pk: this.pk,
      line: this.line,
      language: this.language,
      languages: [...this.languages.keys()],
      companyEnd: this.companyEnd,
      companies: this.companies,
      problems: this.problems,
      header: this.header,
      content: this.content,
      read: this.read
    }
  }
}

/** The buffers of a batch, moved (not copied) to the loading thread. */
export function movedBuffers (batch: ParsedLines): ArrayBuffer[] {
  return [batch.bytes.buffer as ArrayBuffer, batch.read.buffer as ArrayBuffer]
}

function isBlank (line: Buffer): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09) return false
  }
  return true
}
