// The load pipeline's merge for both formats: batches and the loading thread's steps in file order (ADR 021).
import type { RenderedItems } from '../model/build-model.js'
import { AT, WIDTH } from '../model/version-arrays.js'
import { asBuffer, type BatchProblem, type ChangeDelete, type ParsedBatch } from './parse-batch.js'
import { Pacer } from '../slices.js'
import type { ValidationReport } from './validation-report.js'

export interface FormatRules {
  /** E.g. `snapshot.jsonl:12: `. */
  where: (problem: BatchProblem) => string
  /** Its line (JSON Lines), or its index in its language (v1). */
  indexOf: (at: number) => number
  repeated: (language: string, at: number, first: number, pk: number) => string
  /** A language its header does not list. */
  refused?: (language: string, at: number) => string | null
  /** A JSON Lines header the batch carries. */
  header?: (batch: ParsedBatch, problemsBefore: (at: number) => void) => void
  merged?: (batch: ParsedBatch) => void
}

/** A snapshot's model builder, or a change file's set of changes. */
export interface MergeTarget {
  language: (code: string) => void
  readonly languageCount: number
  chunk: (bytes: Buffer) => number
  /** -1, or the index of an earlier item with its pk. */
  addRendered: (language: string, index: number, items: RenderedItems, i: number, chunk: number) => number
  delete?: (language: string, pk: number, index: number) => void
}

export class BatchMerge {
  constructor (private readonly builder: MergeTarget, readonly report: ValidationReport) {}

  /** False once the report is full. */
  merge (batch: ParsedBatch, rules: FormatRules): boolean {
    const { builder, report } = this
    const problemsBefore = this.problemsBefore(batch, rules)
    rules.header?.(batch, problemsBefore)
    const chunk = builder.chunk(asBuffer(batch.bytes))
    // Lines apply in file order: deletes in their place among upserts.
    const deletes = batch.deletes ?? []
    let nextDelete = 0
    const deletesBefore = (at: number): void => {
      for (; nextDelete < deletes.length && (deletes[nextDelete] as ChangeDelete).at < at; nextDelete++) {
        const { at: line, language, pk } = deletes[nextDelete] as ChangeDelete
        problemsBefore(line)
        builder.delete?.(language, pk, rules.indexOf(line))
      }
    }
    for (let i = 0; i < batch.at.length; i++) {
      const at = batch.at[i] as number
      deletesBefore(at)
      problemsBefore(at)
      const language = batch.languages[batch.language[i] as number] as string
      const refusal = rules.refused?.(language, at) ?? null
      if (refusal !== null) {
        report.add(refusal)
        continue
      }
      const index = rules.indexOf(at)
      const first = builder.addRendered(language, index, batch, i, chunk)
      if (first >= 0) report.add(rules.repeated(language, at, first, batch.rows[i * WIDTH + AT.pkOf] as number))
    }
    deletesBefore(Infinity)
    problemsBefore(Infinity)
    rules.merged?.(batch)
    return this.going()
  }

  /** The function reports those before `at` (Infinity: the rest). */
  problemsBefore (batch: ParsedBatch, rules: FormatRules): (at: number) => void {
    const { problems } = batch
    let next = 0
    return at => {
      for (; next < problems.length && (problems[next] as BatchProblem).at < at; next++) {
        const problem = problems[next] as BatchProblem
        this.report.add(`${rules.where(problem)}${problem.text}`)
      }
    }
  }

  problem (line: string): boolean {
    this.report.add(line)
    return this.going()
  }

  going (): boolean {
    if (!this.report.full) return true
    this.report.truncated = true
    return false
  }
}

type Step = { parsed: Promise<ParsedBatch>, merge: (batch: ParsedBatch) => boolean } | (() => boolean)

/** In the order sent; a step's false stops it. */
export class MergeQueue {
  private readonly steps: Step[] = []
  private readonly pacer = new Pacer()
  private stopped = false

  /** `done`: where each batch's input memory goes, for a later batch. */
  constructor (private readonly done: (read: Uint8Array) => void) {}

  get length (): number {
    return this.steps.length
  }

  batch (parsed: Promise<ParsedBatch>, merge: (batch: ParsedBatch) => boolean): void {
    // A failed thread rejects every batch in flight; the load awaits only the first.
    parsed.catch(() => {})
    this.steps.push({ parsed, merge })
  }

  /** At once when nothing is queued. */
  step (step: () => boolean): void {
    if (this.steps.length === 0) {
      if (!this.stopped && !step()) this.stopped = true
    } else {
      this.steps.push(step)
    }
  }

  /** A load stopped early waits for the batches in flight, merging none. */
  async settle (): Promise<void> {
    const steps = this.steps.splice(0)
    this.stopped = true
    for (const step of steps) {
      if (typeof step !== 'function') await step.parsed.then(batch => this.done(batch.read), () => {})
    }
  }

  async mergeUntil (left: number): Promise<boolean> {
    while (!this.stopped && this.steps.length > left) {
      const step = this.steps.shift() as Step
      if (typeof step === 'function') {
        if (!step()) this.stopped = true
        continue
      }
      const batch = await step.parsed
      this.done(batch.read)
      if (!step.merge(batch)) this.stopped = true
      // Batches back while this thread answered requests are ready at once: yield between them.
      if (this.pacer.due) await this.pacer.pause()
    }
    return !this.stopped
  }
}
