// The load pipeline's merge, the same for both formats: parsed batches and the loading thread's own steps
// taken in file order, items into the target and problems into the report (ADR 021).
import type { RenderedItems } from '../model/build-model.js'
import { asBuffer, type BatchProblem, type ChangeDelete, type ParsedBatch } from './parse-batch.js'
import { Pacer } from '../slices.js'
import type { ValidationReport } from './validation-report.js'

/** How a framing's batches are named in the report, and the rules only its format has. */
export interface FormatRules {
  /** Where a batch's problem is, as the report starts its line (`snapshot.jsonl:12: `). */
  where: (problem: BatchProblem) => string
  /** The source index of the batch's item `at`: its line (JSON Lines), or its index in its language (v1). */
  indexOf: (at: number) => number
  /** The problem of item `at`, whose pk repeats the item at source index `first`. */
  repeated: (language: string, at: number, first: number, pk: number) => string
  /** The problem of item `at` whose language its format refuses (one its header does not list), or null. */
  refused?: (language: string, at: number) => string | null
  /** Before a batch's items: a JSON Lines header it carries (`problemsBefore` reports what comes before it). */
  header?: (batch: ParsedBatch, problemsBefore: (at: number) => void) => void
  /** After the batch is merged. */
  merged?: (batch: ParsedBatch) => void
}

/** What the merge feeds: a snapshot's model builder, or a change file's set of changes. */
export interface MergeTarget {
  /** Declares a language (a JSON Lines header's list). */
  language: (code: string) => void
  /** Languages declared or named by an item so far. */
  readonly languageCount: number
  /** Takes a batch's rendered bytes as they are; returns their number for `addRendered`. */
  chunk: (bytes: Buffer) => number
  /** Adds item `i` of a batch rendered into `chunk`, at source `index`: -1, or an earlier item's index with its pk. */
  addRendered: (language: string, index: number, items: RenderedItems, i: number, chunk: number) => number
  /** A change file's `delete` line, at `index` (its line). */
  delete?: (language: string, pk: number, index: number) => void
}

/** Merges parsed batches into the builder and the report. */
export class BatchMerge {
  constructor (private readonly builder: MergeTarget, readonly report: ValidationReport) {}

  /** Merges `batch`, located by `rules`; false once the report is full (reading stops there). */
  merge (batch: ParsedBatch, rules: FormatRules): boolean {
    const { builder, report } = this
    const problemsBefore = this.problemsBefore(batch, rules)
    rules.header?.(batch, problemsBefore)
    const chunk = builder.chunk(asBuffer(batch.bytes))
    // A change file's deletes, in their place among its upserts: lines apply in file order.
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
      if (first >= 0) report.add(rules.repeated(language, at, first, batch.pk[i] as number))
    }
    deletesBefore(Infinity)
    problemsBefore(Infinity)
    rules.merged?.(batch)
    return this.going()
  }

  /** A batch's problems, reported in order: the function returned reports those before `at` (Infinity: the rest). */
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

  /** Adds a problem found on the loading thread; false once the report is full. */
  problem (line: string): boolean {
    this.report.add(line)
    return this.going()
  }

  /** False once the report is full: the load reads no further, and the report says it stopped. */
  going (): boolean {
    if (!this.report.full) return true
    this.report.truncated = true
    return false
  }
}

/** A step of the queue: a batch being parsed and what merges it, or the loading thread's own step. */
type Step = { parsed: Promise<ParsedBatch>, merge: (batch: ParsedBatch) => boolean } | (() => boolean)

/** Batches merged in the order sent, with the loading thread's steps in their place; a step's false stops it. */
export class MergeQueue {
  private readonly steps: Step[] = []
  private readonly pacer = new Pacer()
  private stopped = false

  /** @param done where each merged batch's input memory goes, for a later batch */
  constructor (private readonly done: (read: Uint8Array) => void) {}

  /** Steps not yet taken. */
  get length (): number {
    return this.steps.length
  }

  /** A batch sent to be parsed, and what merges it in its turn. */
  batch (parsed: Promise<ParsedBatch>, merge: (batch: ParsedBatch) => boolean): void {
    // Handled here too: a failed thread rejects every batch in flight, and the load awaits only the first.
    parsed.catch(() => {})
    this.steps.push({ parsed, merge })
  }

  /** A step of the loading thread's, taken in its turn: at once when nothing is queued. */
  step (step: () => boolean): void {
    if (this.steps.length === 0) {
      if (!this.stopped && !step()) this.stopped = true
    } else {
      this.steps.push(step)
    }
  }

  /** A load that stops early (budget reached, a thread failed): waits for the batches in flight, merges none. */
  async settle (): Promise<void> {
    const steps = this.steps.splice(0)
    this.stopped = true
    for (const step of steps) {
      if (typeof step !== 'function') await step.parsed.then(batch => this.done(batch.read), () => {})
    }
  }

  /** Takes the oldest steps until `left` are queued; false when a step said to stop, now or before. */
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
      // Batches that came back while this thread answered requests are ready at once: yield between them.
      if (this.pacer.due) await this.pacer.pause()
    }
    return !this.stopped
  }
}
