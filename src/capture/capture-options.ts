// The capture's command line, every value checked before the first request: a CaptureUsageError names the rule.
import { parseArgs } from 'node:util'
import { isDateTime } from '../schemas/formats.js'
import { LANGUAGE } from '../schemas/snapshot.js'
import { isJsonLinesPath } from '../snapshot/load/load-snapshot.js'
import { readIdRanges } from './id-ranges.js'
import { CaptureUsageError } from '../errors.js'
import { shownUrl } from '../secret-url.js'

export const DEFAULT_CONCURRENCY = 4
export const DEFAULT_RETRIES = 5
export const DEFAULT_TIMEOUT_S = 30
export const DEFAULT_RETRY_DELAY_S = 0.5
/** Polite to an original that serves people too; `--rps 0` lifts it (ADR 040). */
export const DEFAULT_RPS = 10
/** A page of 1,000 items is 1–2 MB: room for long texts, and four in flight stay within ~130 MB. */
export const DEFAULT_MAX_BODY_MB = 32

export interface CaptureOptions {
  /** Without a trailing slash. */
  from: string
  languages: string[]
  /** Sorted, without repeats. */
  companies: number[]
  out: string
  /** By --out's extension. */
  format: 'jsonl' | 'json'
  concurrency: number
  /** null: no cap. */
  rps: number | null
  /** An answer's body, decoded, read up to this and no further. */
  maxBodyBytes: number
  retries: number
  retryDelayMs: number
  timeoutMs: number
  /** null: ASK_PAGE_SIZE. */
  pageSize: number | null
  /** null: when the capture starts. */
  generatedAt: string | null
}

export async function readCaptureOptions (argv: string[]): Promise<CaptureOptions | 'help'> {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        from: { type: 'string' },
        languages: { type: 'string' },
        companies: { type: 'string' },
        out: { type: 'string' },
        concurrency: { type: 'string' },
        rps: { type: 'string' },
        'max-body-mb': { type: 'string' },
        retries: { type: 'string' },
        'retry-delay': { type: 'string' },
        timeout: { type: 'string' },
        'page-size': { type: 'string' },
        'generated-at': { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    }))
  } catch (error) {
    // parseArgs' messages name the option; its advice about `--` does not apply here, and a message is one line.
    throw new CaptureUsageError(
      (error as Error).message.replace(/\. To specify a positional argument.*$/s, '').replaceAll('\n', ' ')
    )
  }
  if (values.help === true) return 'help'
  for (const name of ['from', 'languages', 'companies', 'out'] as const) {
    if (values[name] === undefined) throw new CaptureUsageError(`--${name} is required`)
  }
  const out = values.out as string
  return {
    from: baseUrl(values.from as string),
    languages: languageList(values.languages as string),
    companies: await readIdRanges(values.companies as string),
    out,
    format: outputFormat(out),
    concurrency: integer('concurrency', values.concurrency, 1, 256) ?? DEFAULT_CONCURRENCY,
    rps: requestRate(values.rps),
    maxBodyBytes: (integer('max-body-mb', values['max-body-mb'], 1, 4096) ?? DEFAULT_MAX_BODY_MB) * 1024 * 1024,
    retries: integer('retries', values.retries, 0, 100) ?? DEFAULT_RETRIES,
    retryDelayMs: (nonNegative('retry-delay', values['retry-delay']) ?? DEFAULT_RETRY_DELAY_S) * 1000,
    timeoutMs: (positive('timeout', values.timeout) ?? DEFAULT_TIMEOUT_S) * 1000,
    pageSize: integer('page-size', values['page-size'], 1, 1_000_000) ?? null,
    generatedAt: generatedAt(values['generated-at'])
  }
}

function baseUrl (value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new CaptureUsageError(`--from: ${JSON.stringify(shownUrl(value))} is not a URL (like https://news.example.com)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CaptureUsageError(`--from: ${JSON.stringify(shownUrl(value))} is not an http or https URL`)
  }
  if (url.search !== '' || url.hash !== '') {
    throw new CaptureUsageError(`--from: ${JSON.stringify(shownUrl(value))}: the base URL takes no query or fragment`)
  }
  // A base with a path prefix (https://example.com/news) keeps it; the language segment follows it.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

function languageList (value: string): string[] {
  const codes = value.split(',').map(code => code.trim()).filter(code => code !== '')
  if (codes.length === 0) throw new CaptureUsageError('--languages: no language (like en,es,fr)')
  for (const code of codes) {
    if (!LANGUAGE.test(code)) {
      throw new CaptureUsageError(`--languages: ${JSON.stringify(code)} is not a language segment (${LANGUAGE.source})`)
    }
  }
  return [...new Set(codes)]
}

function outputFormat (out: string): 'jsonl' | 'json' {
  if (isJsonLinesPath(out)) return 'jsonl'
  if (/\.json$/i.test(out)) return 'json'
  throw new CaptureUsageError(
    `--out: ${JSON.stringify(out)}: the extension gives the format: use .json (format v1) or .jsonl/.ndjson (JSON Lines)`
  )
}

/** 0: no cap. */
function requestRate (value: string | undefined): number | null {
  const rps = nonNegative('rps', value) ?? DEFAULT_RPS
  return rps === 0 ? null : rps
}

function generatedAt (value: string | undefined): string | null {
  if (value === undefined) return null
  if (!isDateTime(value)) {
    throw new CaptureUsageError(
      `--generated-at: ${JSON.stringify(value)} is not an ISO-8601 timestamp (like 2026-11-20T09:30:00Z)`
    )
  }
  return value
}

function integer (name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new CaptureUsageError(`--${name}: ${JSON.stringify(value)} is not a whole number from ${min} to ${max}`)
  }
  return n
}

function positive (name: string, value: string | undefined): number | undefined {
  const n = nonNegative(name, value)
  if (n === 0) throw new CaptureUsageError(`--${name}: must be above 0`)
  return n
}

function nonNegative (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n)) {
    throw new CaptureUsageError(
      `--${name}: ${JSON.stringify(value)} is not a number of seconds or requests (like 2 or 0.5)`
    )
  }
  return n
}
