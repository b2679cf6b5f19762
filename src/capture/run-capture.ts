// One capture: check that --out can be written, walk the source, write the snapshot through a temporary file that
// the service's own loader must accept, rename it over --out.
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
  /** Aborting it leaves --out as it was. */
  signal: AbortSignal
  progress?: WalkProgress
  onRetry?: (retry: RetryNotice) => void
}

export interface CaptureReport {
  options: CaptureOptions
  walk: WalkResult
  /** Symbolic links followed. */
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
  const client = new SourceClient({ ...options, onRetry: hooks.onRetry })
  const { signal, progress } = hooks
  const walk = await walkSource({ ...options, base: options.from, client, signal, progress })
  const total = walk.languages.reduce((n, language) => n + language.items.length, 0)
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
      signal,
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
    if (error instanceof CaptureError || error instanceof CaptureInterrupted || signal.aborted) throw error
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

/** Before the walk, not after hours of it. */
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
