// One capture from start to end: check that --out can be written, walk the source, write the snapshot
// through a temporary file, load it with the service's own loader, rename it over --out.
import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { SnapshotError, CaptureError, CaptureInterrupted, errnoText } from '../errors.js'
import { checkSnapshotFile } from '../snapshot/load/load-snapshot.js'
import type { CaptureOptions } from './capture-options.js'
import { SourceClient, type ClientStats, type RetryNotice } from './source-client.js'
import { walkSource, type WalkProgress, type WalkResult } from './walk-source.js'
import { documentFormat, writeSnapshotFile, type SnapshotFormat } from '../snapshot/write-snapshot-file.js'

interface CaptureHooks {
  /** Aborting it stops the capture; --out is left as it was. */
  signal: AbortSignal
  progress?: WalkProgress
  onRetry?: (retry: RetryNotice) => void
}

export interface CaptureReport {
  options: CaptureOptions
  walk: WalkResult
  /** The file written (symbolic links followed) and its size. */
  path: string
  bytes: number
  format: SnapshotFormat
  stats: ClientStats
  elapsedMs: number
}

export async function runCapture (options: CaptureOptions, hooks: CaptureHooks): Promise<CaptureReport> {
  const started = performance.now()
  // Seconds are enough for a version label, and keep it in the form the service's own examples use.
  const generatedAt = options.generatedAt ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  await checkWritable(options.out)
  const client = new SourceClient({
    concurrency: options.concurrency,
    rps: options.rps,
    retries: options.retries,
    retryDelayMs: options.retryDelayMs,
    timeoutMs: options.timeoutMs,
    ...(hooks.onRetry === undefined ? {} : { onRetry: hooks.onRetry })
  })
  const walk = await walkSource({
    base: options.from,
    languages: options.languages,
    companies: options.companies,
    pageSize: options.pageSize,
    concurrency: options.concurrency,
    client,
    signal: hooks.signal,
    ...(hooks.progress === undefined ? {} : { progress: hooks.progress })
  })
  const total = walk.languages.reduce((n, language) => n + language.items.length, 0)
  // --out's extension decided JSON Lines or a document (capture-options.ts).
  const format: SnapshotFormat = options.format === 'jsonl' ? 'jsonl' : documentFormat(total)
  const expected = Object.fromEntries(walk.languages.map(language => [language.code, language.items.length]))
  const byCode = new Map(walk.languages.map(language => [language.code, language]))
  let written
  try {
    written = await writeSnapshotFile(options.out, {
      generatedAt,
      languages: options.languages,
      items: async (code, each) => {
        for (const { json, companies } of byCode.get(code)?.items ?? []) {
          await each({ ...JSON.parse(json) as object, companies })
        }
      }
    }, {
      format,
      signal: hooks.signal,
      check: async temporary => {
        // The service's own loader is the judge: what it refuses is never put in place of --out.
        const counts = (await checkSnapshotFile(temporary)).itemCounts
        if (Object.keys(expected).some(code => counts[code] !== expected[code])) {
          throw new CaptureError(
            `the written snapshot has ${JSON.stringify(counts)} items, the walk found ${JSON.stringify(expected)}: nothing written`
          )
        }
      }
    })
  } catch (error) {
    if (error instanceof CaptureError || error instanceof CaptureInterrupted || hooks.signal.aborted) throw error
    if (error instanceof SnapshotError) {
      const more = error.problems.length > 1 ? ` (and ${error.problems.length - 1} more problems)` : ''
      throw new CaptureError(
        `the capture would not load, nothing written: ${error.problems[0] ?? error.message}${more}`
      )
    }
    throw new CaptureError(`cannot write ${options.out}: ${(error as Error).message}`)
  }
  return {
    options,
    walk,
    path: written.path,
    bytes: written.bytes,
    format,
    stats: client.stats,
    elapsedMs: performance.now() - started
  }
}

/** Fails before the walk, not after hours of it, when --out could not be replaced. */
async function checkWritable (out: string): Promise<void> {
  const info = await stat(out).catch(() => null)
  if (info !== null && !info.isFile()) throw new CaptureError(`cannot write ${out}: it is not a regular file`)
  const directory = dirname(resolve(out))
  try {
    await access(directory, constants.W_OK)
  } catch (error) {
    // A missing directory is created when the snapshot is written.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw new CaptureError(`cannot write in ${directory}: ${errnoText(error)}`)
  }
}
