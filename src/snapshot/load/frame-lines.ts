// A JSON Lines file's framing: batches of whole lines, and the format's merge rules (problems by line, a header).
import { basename } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../../schemas/formats.js'
import { JsonLinesHeaderSchema } from '../../schemas/snapshot.js'
import type { FormatRules } from './merge-batches.js'
import { lineCheck, type ParsedBatch } from './parse-batch.js'
import { preview } from './validation-report.js'
import type { Framing, FramingParts } from './framing.js'
import { NEWLINE } from './text-position.js'
import { bytesText } from './read-chunks.js'

const headerCheck = TypeCompiler.Compile(JsonLinesHeaderSchema)

const OTHER_KIND = {
  changes: 'this is a change file (its header says "changes"), not a snapshot: give it as a change file, after the snapshot it changes',
  snapshot: 'this is a snapshot (its header says "snapshot"), not a change file: give it as the snapshot, before its change files'
}

export class LineFraming implements Framing, FormatRules {
  protected readonly name: string
  /** parse-batch.ts checks the ops, frame-changes.ts the header. */
  protected readonly changes: boolean = false
  /** The batch being merged starts after this line. */
  protected lines = 0
  /** No header may come after a value. */
  protected content = false
  generatedAt: string | null = null
  /** Null: any language. */
  private listed: Set<string> | null = null
  /** A line not yet ended: in a buffer of its own, or in the last read's. */
  private carry: Buffer | null = null
  private carryInRead = false
  private first = true

  constructor (protected readonly parts: FramingParts, private readonly maxLineBytes: number) {
    this.name = basename(parts.file)
  }

  async read (): Promise<boolean> {
    const { memory, chunks, batchBytes } = this.parts
    const { carry } = this
    const carried = carry?.length ?? 0
    // A long line doubles the read rather than being copied at every read.
    const want = Math.max(batchBytes, Math.min(carried, this.maxLineBytes + 1 - carried))
    // Memory of its own: it moves to the thread that parses it.
    const buffer = memory.take(carried + want)
    if (carry !== null) {
      carry.copy(buffer)
      if (this.carryInRead) memory.give(carry)
    }
    const read = await chunks.readInto(buffer, carried, want)
    if (read === 0) {
      memory.give(buffer)
      return false
    }
    const filled = carried + read
    const cut = buffer.lastIndexOf(NEWLINE, filled - 1)
    // A read is a whole batch however long the carry, so a carried line may end past the limit.
    if (carried > 0 && cut !== -1 && buffer.indexOf(NEWLINE, carried) > this.maxLineBytes) {
      memory.give(buffer)
      return this.tooLong()
    }
    this.carryInRead = cut === -1
    // Copied out before the buffer moves.
    this.carry = cut === -1
      ? buffer.subarray(0, filled)
      : cut + 1 < filled ? ownCopy(buffer.subarray(cut + 1, filled)) : null
    if (cut !== -1) this.send(buffer.subarray(0, cut + 1))
    if ((this.carry?.length ?? 0) > this.maxLineBytes) return this.tooLong()
    return true
  }

  /** Its line number is known once every line before it is merged. */
  private tooLong (): false {
    // Nothing may send it after the stop.
    this.carry = null
    const limit = bytesText(this.maxLineBytes)
    const { queue, merge } = this.parts
    queue.step(() => merge.problem(
      `${this.name}:${this.lines + 1}: line ${this.lines + 1} is longer than ${limit}: is it one JSON document named .jsonl?`
    ) && false)
    return false
  }

  /** The last line may have no `\n`. */
  end (): void {
    if (this.carry !== null) this.send(this.carry)
    this.carry = null
  }

  finish (): void {
    const { merge: { report }, builder } = this.parts
    if (report.problems.length > 0) return
    if (!this.content) report.add(this.lines === 0 ? 'the file is empty' : 'the file has no line but blank ones')
    else if (builder.languageCount === 0) {
      report.add(`${this.name}: names no language: a header with \`languages\`, or at least one item, is needed`)
    }
  }

  private send (bytes: Buffer): void {
    const { queue, parser, merge } = this.parts
    queue.batch(
      parser.parse({ kind: 'lines', bytes, first: this.first, changes: this.changes }),
      batch => !this.otherKind(batch) && merge.merge(batch, this)
    )
    this.first = false
  }

  /** A change file as a snapshot, or back: one problem, and reading stops. */
  private otherKind (batch: ParsedBatch): boolean {
    const { header } = batch
    if (header === null || this.content) return false
    const [own, other] = this.changes ? ['changes', 'snapshot'] as const : ['snapshot', 'changes'] as const
    if (own in header.value || !(other in header.value)) return false
    const { merge } = this.parts
    merge.problemsBefore(batch, this)(header.at)
    merge.report.add(`${this.where(header)}${OTHER_KIND[other]}`)
    return true
  }

  // FormatRules; a batch's lines are numbered from 1.

  /** `snapshot.jsonl:12: `, or `snapshot.jsonl:12:40: ` with a field's own column. */
  where ({ at, column }: { at: number, column?: number }): string {
    return column === undefined ? `${this.name}:${this.lines + at}: ` : `${this.name}:${this.lines + at}:${column}: `
  }

  /** Its line, so a repeat names the line of the first. */
  indexOf (at: number): number {
    return this.lines + at
  }

  repeated (_language: string, at: number, first: number, pk: number): string {
    return `${this.where({ at })}pk: ${pk} repeats line ${first}`
  }

  refused (language: string, at: number): string | null {
    if (this.listed === null || this.listed.has(language)) return null
    return `${this.where({ at })}language: ${preview(language)} is not one of the header's languages (${[...this.listed].join(', ')})`
  }

  header ({ header }: ParsedBatch, problemsBefore: (at: number) => void): void {
    if (header === null) return
    problemsBefore(header.at)
    const where = this.where(header)
    const { value } = header
    const { merge: { report }, builder } = this.parts
    // Only as the file's first JSON value; later, it is an item without a pk.
    if (this.content) {
      report.addSchemaErrors(lineCheck.Errors(value), where)
    } else if ('language' in value) {
      report.add(`${where}language: belongs on item lines; a header lists its languages in \`languages\``)
    } else if (!headerCheck.Check(value)) {
      report.addSchemaErrors(headerCheck.Errors(value), where)
    } else {
      this.generatedAt = value.generated_at ?? null
      if (value.languages !== undefined) {
        this.listed = new Set(value.languages)
        // Served even without items (count 0).
        for (const code of value.languages) builder.language(code)
      }
    }
  }

  merged (batch: ParsedBatch): void {
    this.content ||= batch.content
    this.lines += batch.count
  }
}

/** Buffer.from may copy a few bytes into Node's shared pool. */
function ownCopy (bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length)
  bytes.copy(copy)
  return copy
}
