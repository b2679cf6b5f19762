// A format v1 file's framing (ADR 007): streamed items batched, members judged in their place, problems located.
import { basename } from 'node:path'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../../schemas/formats.js'
import { LANGUAGE, SnapshotSchema } from '../../schemas/snapshot.js'
import type { BatchMemory } from './batch-memory.js'
import { READ_CHUNK } from './read-chunks.js'
import { DocumentFollower } from './read-document.js'
import type { FormatRules } from './merge-batches.js'
import { LanguageNumbers, type BatchProblem, type ItemsTask } from './parse-batch.js'
import { locateSyntaxError } from './json-text.js'
import type { TextPosition } from './text-position.js'
import { NOT_A_LANGUAGE, escapePointer, jsonPath } from './validation-report.js'
import { Pacer } from '../slices.js'
import type { Framing, FramingParts } from './framing.js'
import { NotFollowed, NotText } from '../../errors.js'

// The top-level rules are parts of the one snapshot schema, not rules of their own.
const generatedAtCheck = TypeCompiler.Compile(Type.Pick(SnapshotSchema, ['generated_at']))

export class DocumentFraming implements Framing {
  private readonly name: string
  private readonly follower: DocumentFollower
  private readonly batcher: ItemBatcher
  private readonly readBuffer = Buffer.allocUnsafe(READ_CHUNK)
  private readonly pacer = new Pacer()
  /** The report says so after the items before it. */
  private stopped = false
  generatedAt: string | null = null

  constructor (private readonly parts: FramingParts, maxItemBytes: number) {
    this.name = basename(parts.file)
    this.batcher = new ItemBatcher(parts.batchBytes, parts.memory)
    this.follower = new DocumentFollower({
      member: (key, value, position) => { this.member(key, value, position) },
      language: (code, position) => { this.language(code, position) },
      item: (language, index, bytes, position) => { this.item(language, index, bytes, position) }
    }, maxItemBytes)
  }

  async read (): Promise<boolean> {
    const read = await this.parts.chunks.readInto(this.readBuffer, 0, this.readBuffer.length)
    if (read === 0) return false
    if (!this.follow(() => { this.follower.feed(this.readBuffer.subarray(0, read)) })) return false
    if (this.pacer.due) await this.pacer.pause()
    return true
  }

  end (): void {
    if (!this.stopped) this.follow(() => { this.follower.end() })
    this.send()
  }

  finish (): void {
    const { merge: { report }, builder } = this.parts
    if (report.problems.length === 0 && builder.languageCount === 0) {
      report.add(`${this.name}: languages: must name at least one language`)
    }
  }

  private follow (step: () => void): boolean {
    try {
      step()
      return true
    } catch (error) {
      if (!(error instanceof NotFollowed || error instanceof NotText)) throw error
      this.stopped = true
      const line = error instanceof NotFollowed
        ? `${this.where(error)}not a snapshot document: ${error.reason}`
        : notText(this.name, error.message)
      this.inOrder(() => this.parts.merge.problem(line) && false)
      return false
    }
  }

  /** `snapshot.json:12:7: `. */
  private where (position: TextPosition): string {
    return `${this.name}:${position.line}:${position.column}: `
  }

  private member (key: string, value: Buffer, position: TextPosition): void {
    // Parsed now: the bytes are the streamer's until this returns.
    const where = this.where(position)
    const path = jsonPath(`/${escapePointer(key)}`)
    const json = value.toString('utf8')
    let parsed: unknown
    let problem: string | null = null
    try {
      parsed = JSON.parse(json)
    } catch (error) {
      // Any other member is allowed, but must be JSON.
      const { what, position: at } = locateSyntaxError(json, error, position)
      problem = `${this.where(at)}${path}: not valid JSON: ${what}`
    }
    const { merge } = this.parts
    this.inOrder(() => {
      if (problem !== null) return merge.problem(problem)
      if (key !== 'generated_at') return true
      if (!generatedAtCheck.Check({ generated_at: parsed })) {
        merge.report.addSchemaErrors(generatedAtCheck.Errors({ generated_at: parsed }), where)
        return merge.going()
      }
      this.generatedAt = parsed as string
      return true
    })
  }

  private language (code: string, position: TextPosition): void {
    // In its place: the items before a bad language code have their repeats found first.
    const { merge, builder } = this.parts
    this.inOrder(() => {
      if (!LANGUAGE.test(code)) {
        return merge.problem(
          `${this.where(position)}${jsonPath(`/languages/${escapePointer(code)}`)}: ${NOT_A_LANGUAGE}`
        )
      }
      builder.language(code)
      return true
    })
  }

  private item (language: string, index: number, bytes: Buffer, position: TextPosition): void {
    if (this.batcher.add(language, index, bytes, position)) return
    this.send()
    this.batcher.add(language, index, bytes, position)
  }

  private inOrder (step: () => boolean): void {
    this.send()
    this.parts.queue.step(step)
  }

  private send (): void {
    if (this.batcher.size === 0) return
    const task = this.batcher.take()
    const { queue, parser, merge } = this.parts
    queue.batch(parser.parse(task), batch => merge.merge(batch, new DocumentRules(this.name, task)))
  }
}

/** `… at line 3, column 9` as `name:3:9: …`. */
function notText (name: string, message: string): string {
  const at = / at line (\d+), column (\d+)$/.exec(message)
  return at === null
    ? `${name}: ${message}`
    : `${name}:${at[1] as string}:${at[2] as string}: ${message.slice(0, at.index)}`
}

class DocumentRules implements FormatRules {
  constructor (private readonly name: string, private readonly task: ItemsTask) {}

  where ({ at, position }: Pick<BatchProblem, 'at' | 'position'>): string {
    const { line, column } = position ?? this.positionOf(at)
    return `${this.name}:${line}:${column}: `
  }

  indexOf (at: number): number {
    return this.task.index[at - 1] as number
  }

  repeated (language: string, at: number, first: number, pk: number): string {
    const where = `/languages/${escapePointer(language)}`
    return `${this.where({ at })}${jsonPath(`${where}/${this.indexOf(at)}/pk`)}: ${pk} repeats ${jsonPath(`${where}/${first}`)}`
  }

  private positionOf (at: number): TextPosition {
    return { line: this.task.line[at - 1] as number, column: this.task.column[at - 1] as number }
  }
}

class ItemBatcher {
  private buffer: Buffer = Buffer.alloc(0)
  private used = 0
  private ends: number[] = []
  private language: number[] = []
  private languages = new LanguageNumbers()
  private index: number[] = []
  private line: number[] = []
  private column: number[] = []

  constructor (private readonly batchBytes: number, private readonly memory: BatchMemory) {}

  get size (): number {
    return this.ends.length
  }

  /** False: send the batch, and add the item to the next. */
  add (language: string, index: number, bytes: Buffer, position: TextPosition): boolean {
    if (this.used + bytes.length > this.buffer.length) {
      if (this.ends.length > 0) return false
      this.buffer = this.memory.take(Math.max(this.batchBytes, bytes.length))
    }
    bytes.copy(this.buffer, this.used)
    this.used += bytes.length
    this.ends.push(this.used)
    this.language.push(this.languages.of(language))
    this.index.push(index)
    this.line.push(position.line)
    this.column.push(position.column)
    return true
  }

  take (): ItemsTask {
    const task: ItemsTask = {
      kind: 'items',
      bytes: this.buffer.subarray(0, this.used),
      ends: this.ends,
      language: this.language,
      languages: this.languages.codes,
      index: this.index,
      line: this.line,
      column: this.column
    }
    this.buffer = Buffer.alloc(0)
    this.used = 0
    this.ends = []
    this.language = []
    this.languages = new LanguageNumbers()
    this.index = []
    this.line = []
    this.column = []
    return task
  }
}
