// The one load pipeline (ADR 021): read-chunks → frame-lines|frame-document → parse-pool → merge-batches → build-model
import { SnapshotError, TooBigError } from '../../errors.js'
import { SnapshotModelBuilder } from '../model/build-model.js'
import type { SnapshotInfo, SnapshotModel } from '../model/snapshot-model.js'
import type { LoadWatch, MemoryGuard } from '../memory-budget.js'
import { BatchMemory } from './batch-memory.js'
import type { Framing, FramingParts } from './framing.js'
import { DocumentFraming } from './frame-document.js'
import { LineFraming } from './frame-lines.js'
import { BatchMerge, MergeQueue, type MergeTarget } from './merge-batches.js'
import { INLINE_BATCH_BYTES, THREAD_BATCH_BYTES, parsePool, type BatchParser, type ParsePool } from './parse-pool.js'
import { FileChunks, MAX_ITEM_BYTES, type LinkRule } from './read-chunks.js'
import { DEFAULT_PROBLEM_CAP, ValidationReport } from './validation-report.js'

interface LoadOptions {
  /** A reload: the load leaves a core to the requests. */
  serving?: boolean
}

interface LoadLog {
  warn: (fields: object, message: string) => void
}

/** Tests give their own. */
interface LoaderParts {
  pool: ParsePool
  batchBytes?: number
  /** A JSON Lines line, or a v1 item, held whole. */
  maxItemBytes: number
  problemCap: number
  clock: () => Date
  log: LoadLog | null
  /** Null: no budget (the CLI's checks, most tests). */
  memory: MemoryGuard | null
}

export class SnapshotLoader {
  private readonly parts: LoaderParts

  constructor (parts: Partial<LoaderParts> = {}) {
    this.parts = {
      pool: parsePool,
      maxItemBytes: MAX_ITEM_BYTES,
      problemCap: DEFAULT_PROBLEM_CAP,
      clock: () => new Date(),
      log: null,
      memory: null,
      ...parts
    }
  }

  get maxItemBytes (): number {
    return this.parts.maxItemBytes
  }

  /** Throws SnapshotError, never anything else, for a bad file. */
  async load (file: string, { serving = false }: LoadOptions = {}): Promise<SnapshotModel> {
    const builder = new SnapshotModelBuilder()
    const frame = (parts: FramingParts): Framing => isJsonLinesPath(file)
      ? new LineFraming(parts, this.parts.maxItemBytes)
      : new DocumentFraming(parts, this.parts.maxItemBytes)
    try {
      return await this.read(file, builder, frame, serving, async (framing, version) => {
        const info: SnapshotInfo = {
          source: file, version, generatedAt: framing.generatedAt, loadedAt: this.parts.clock()
        }
        return await builder.buildInSlices(info)
      })
    } catch (error) {
      // Now, not whenever the builder is collected (ADR 012).
      builder.discard()
      throw error
    }
  }

  /** `target`: a model builder or a change set; held to the memory budget (ADR 024). */
  async read<T, F extends Framing> (
    file: string, target: MergeTarget, frame: (parts: FramingParts) => F, serving: boolean,
    finish: (framing: F, digest: string) => Promise<T>, links: LinkRule = 'follow'
  ): Promise<T> {
    const { pool, log, problemCap, memory } = this.parts
    let chunks: FileChunks | null = null
    try {
      chunks = await FileChunks.open(file, links)
      // Before anything is read: a file that cannot fit is refused with its numbers.
      const watch = await memory?.admit(file, chunks.size, isJsonLinesPath(file) ? 'jsonl' : 'json') ?? null
      const parser = await pool.parserFor(chunks.size, serving, reason => {
        log?.warn({ reason }, 'the parse threads could not start: snapshots are parsed on the main thread')
      })
      const report = new ValidationReport(problemCap)
      const framing = await this.run(file, chunks, parser, target, report, frame, watch).finally(() => parser.done())
      if (report.problems.length > 0) throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, report.lines())
      watch?.check()
      const digest = chunks.digest()
      await chunks.close()
      chunks = null
      return await finish(framing, digest)
    } catch (error) {
      // At the budget, the idle threads' heaps (~35 MB each, ADR 022) are given back now, not 30 s later: on Node 24
      // the next load waited that long for RSS to fall. A later large load starts them again. The refusal is what
      // is reported, whatever the close does.
      if (error instanceof TooBigError) await pool.close().catch(() => {})
      throw classify(error, file)
    } finally {
      await chunks?.close()
    }
  }

  private async run<F extends Framing> (
    file: string, chunks: FileChunks, parser: BatchParser, builder: MergeTarget, report: ValidationReport,
    frame: (parts: FramingParts) => F, watch: LoadWatch | null
  ): Promise<F> {
    const batchBytes = this.parts.batchBytes ?? (parser.threads > 0 ? THREAD_BATCH_BYTES : INLINE_BATCH_BYTES)
    const memory = new BatchMemory(batchBytes)
    const queue = new MergeQueue(read => memory.give(read))
    const parts: FramingParts = {
      file, chunks, parser, queue, merge: new BatchMerge(builder, report), builder, memory, batchBytes
    }
    const framing = frame(parts)
    try {
      for (let more = true; more;) {
        more = await framing.read()
        if (!await queue.mergeUntil(more ? parser.depth - 1 : 0)) return framing
        watch?.check()
      }
      framing.end()
      if (await queue.mergeUntil(0)) framing.finish()
      return framing
    } catch (error) {
      // No thread is left parsing for a load that is over.
      await queue.settle()
      throw error
    }
  }
}

/** Snapshots and change files alike. */
export const processLoader = new SnapshotLoader()

export async function loadSnapshotFile (file: string): Promise<SnapshotModel> {
  return await processLoader.load(file)
}

interface SnapshotFacts {
  languages: string[]
  itemCounts: Record<string, number>
  generatedAt: string | null
}

/** Lets the model go at once: a command-line tool never manages a model's memory. */
export async function checkSnapshotFile (file: string): Promise<SnapshotFacts> {
  const model = await loadSnapshotFile(file)
  const facts = { languages: model.languages, itemCounts: model.itemCounts(), generatedAt: model.info.generatedAt }
  model.memory.retire()
  return facts
}

export function isJsonLinesPath (file: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(file)
}

/** The file's fault (bad, or unreadable), or the service's own. */
function classify (error: unknown, file: string): unknown {
  if (error instanceof SnapshotError) return error
  const code = (error as NodeJS.ErrnoException | null)?.code
  if (typeof code !== 'string') return error
  return new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(code)])
}

/** Editor-facing. */
export function describeReadError (code: string): string {
  switch (code) {
    case 'ENOENT': return 'the file does not exist'
    case 'EACCES':
    case 'EPERM': return 'permission denied'
    case 'EISDIR': return 'the path is a directory, not a file'
    case 'EFIFO': return 'a named pipe, not a file'
    case 'ENOTREG': return 'not a regular file (a socket or a device)'
    case 'EDANGLING': return 'a link to a file that does not exist'
    case 'ELOOP': return 'a loop of symbolic links'
    case 'ELINKOUT': return 'a symbolic link out of the changes directory: a change file must be a regular file (or a link to one in the same directory)'
    default: return `the file could not be read (${code})`
  }
}
