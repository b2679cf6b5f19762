// The request journal as HAR 1.2 (GET /-/requests.har), which browsers' developer tools open: what the journal keeps,
// in the format's fields, and its own (version, thread, trouble, truncated) as `_` fields.
import { STATUS_CODES } from 'node:http'
import type { Har, JournalEntry } from '../schemas/request-journal.js'
import { VERSION } from '../version.js'
import { REDACTED } from './redact-request.js'

type HarEntry = Har['log']['entries'][number]

/** The request's absolute URL: a target in origin form under its Host (the journal keeps no scheme: http). */
function absolute ({ url, headers }: JournalEntry): string {
  if (url === null) return ''
  return url.startsWith('/') ? `http://${headers.host ?? 'localhost'}${url}` : url
}

function queryString (url: string | null): Array<{ name: string, value: string }> {
  const mark = url?.indexOf('?') ?? -1
  if (url === null || mark < 0) return []
  return [...new URLSearchParams(url.slice(mark + 1))].map(([name, value]) => ({ name, value }))
}

function requestHeaders ({ headers }: JournalEntry): Array<{ name: string, value: string }> {
  const kept: Array<{ name: string, value: string }> = []
  for (const [name, value] of [
    ['Host', headers.host], ['Accept', headers.accept], ['Origin', headers.origin], ['Prefer', headers.prefer]
  ] as const) {
    if (value !== null) kept.push({ name, value })
  }
  if (headers.authorization) kept.push({ name: 'Authorization', value: REDACTED })
  if (headers.cookie) kept.push({ name: 'Cookie', value: REDACTED })
  return kept
}

function harEntry (entry: JournalEntry): HarEntry {
  const status = entry.status ?? 0
  return {
    startedDateTime: entry.at,
    time: entry.durationMs,
    request: {
      method: entry.method ?? '',
      url: absolute(entry),
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: requestHeaders(entry),
      queryString: queryString(entry.url),
      headersSize: -1,
      bodySize: 0
    },
    response: {
      status,
      statusText: STATUS_CODES[status] ?? '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: entry.contentType === null ? [] : [{ name: 'Content-Type', value: entry.contentType }],
      content: { size: entry.bytes, mimeType: entry.contentType ?? '' },
      redirectURL: '',
      headersSize: -1,
      bodySize: entry.bytes,
      // As Chromium writes a request that got no answer.
      ...(entry.status === null ? { _error: 'net::ERR_CONNECTION_RESET' } : {})
    },
    cache: {},
    // The journal times the whole answer: all of it is the wait.
    timings: { blocked: -1, dns: -1, connect: -1, send: 0, wait: entry.durationMs, receive: 0, ssl: -1 },
    _version: entry.version,
    _thread: entry.thread,
    _trouble: entry.trouble,
    _truncated: entry.truncated
  }
}

/** Oldest first, as a browser records them. */
export function journalHar (entries: readonly JournalEntry[]): Har {
  return {
    log: {
      version: '1.2',
      creator: { name: 'explore-replica', version: VERSION },
      entries: [...entries].reverse().map(harEntry)
    }
  }
}
