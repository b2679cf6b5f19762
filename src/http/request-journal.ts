// The request journal (REQUEST_JOURNAL, ADR 041): the last requests this thread answered, in a ring of records reused
// in place, bounded in count and in bytes; read and reset by /-/requests (routes/requests-route.ts).
import type { IncomingMessage } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FaultKind } from '../config.js'
import type { Trouble, TroubleCause } from '../explore/simulated-trouble.js'
import type { JournalEntry } from '../schemas/request-journal.js'
import { bounded, HEADER_CHARS, redactTarget, URL_CHARS } from './redact-request.js'

/** What the journal keeps per request on average: REQUEST_JOURNAL_SIZE × this is its bound in bytes. */
export const BYTES_PER_REQUEST = 1024
/** A record's own fields, above its strings (about 30 of 8 bytes, and the object's header). */
const RECORD_BYTES = 256
/** The longest method kept: Node reads none longer (MKCALENDAR, UNSUBSCRIBE), a refused line's is cut there. */
export const METHOD_CHARS = 16
/** A record with every value at its bound: one is always kept, whatever REQUEST_JOURNAL_SIZE. */
const LARGEST_RECORD = RECORD_BYTES + cost(METHOD_CHARS) + cost(URL_CHARS) + 6 * cost(HEADER_CHARS)

/** A getter's value, read once: it is the same for the thread's life. */
const TIME_ORIGIN = performance.timeOrigin

/** A string (or its length) as the journal counts it: V8's header and 2 bytes a character, whatever it holds. */
function cost (text: string | number | null): number {
  return text === null ? 0 : 16 + 2 * (typeof text === 'number' ? text : text.length)
}

/** The bytes a journal of `size` requests may hold: what the memory budget sets aside for each (memory-budget.ts). */
export function journalBytes (size: number): number {
  return Math.max(size * BYTES_PER_REQUEST, LARGEST_RECORD)
}

/** What the memory budget sets aside for the journals: one per thread that answers the public port. */
export function journalReserve (
  config: { requestJournal: boolean, requestJournalSize: number }, servingThreads: number
): number {
  return config.requestJournal ? journalBytes(config.requestJournalSize) * Math.max(1, servingThreads) : 0
}

/** One request, as kept: the same shape for every record, written over once the ring is full. */
class Kept {
  at = 0
  durationMs = 0
  method: string | null = null
  url: string | null = null
  host: string | null = null
  accept: string | null = null
  origin: string | null = null
  prefer: string | null = null
  authorization = false
  cookie = false
  /** As sent: a longer one than was kept was cut. */
  urlLength = 0
  hostLength = 0
  acceptLength = 0
  originLength = 0
  preferLength = 0
  /** 0: no answer. */
  status = 0
  bytes = 0
  contentType: string | null = null
  version: string | null = null
  /** -1: none drawn. */
  draw = -1
  delayMs = 0
  delayBy: TroubleCause | null = null
  failStatus = 0
  failureBy: TroubleCause | null = null
  fault: FaultKind | null = null
  /** What this record counts for in the journal's bytes. */
  size = 0
}

/** What a record keeps of a header value; `length` as sent. */
function headerValue (value: string | string[] | undefined): string | null {
  if (value === undefined) return null
  return bounded(Array.isArray(value) ? value.join(', ') : value, HEADER_CHARS)
}

function sentLength (value: string | string[] | undefined): number {
  return value === undefined ? 0 : Array.isArray(value) ? value.join(', ').length : value.length
}

export interface JournalTally {
  kept: number
  bytes: number
  dropped: number
}

/** One journal's part of GET /-/requests: this thread's, or a serving thread's sent to the control. */
export interface JournalPart extends JournalTally {
  /** Epoch milliseconds: started, or last reset. */
  since: number
  entries: JournalEntry[]
}

export class RequestJournal {
  readonly maxBytes: number
  /** Grown to `size` records, then each written over in turn. */
  private readonly ring: Kept[] = []
  /** The slot written next. */
  private head = 0
  private count = 0
  private held = 0
  private lost = 0
  /** Epoch milliseconds. */
  since = Date.now()

  /** `thread`: this serving thread's place (WORKERS > 1), null for the one process. */
  constructor (readonly size: number, readonly thread: number | null = null) {
    this.maxBytes = journalBytes(size)
  }

  /**
   * A request answered. `started`: `performance.now()` when it was read; `status` 0 when no answer was sent; `draw`
   * -1 when no trouble was drawn for it.
   */
  record (
    request: IncomingMessage, started: number, status: number, bytes: number, contentType: string | null,
    version: string | null, trouble: Trouble | null, draw: number
  ): void {
    const kept = this.slot()
    const { headers } = request
    kept.at = TIME_ORIGIN + started
    kept.durationMs = performance.now() - started
    kept.method = request.method ?? null
    this.keepTarget(kept, request.url ?? null)
    kept.host = headerValue(headers.host)
    kept.hostLength = sentLength(headers.host)
    kept.accept = headerValue(headers.accept)
    kept.acceptLength = sentLength(headers.accept)
    kept.origin = headerValue(headers.origin)
    kept.originLength = sentLength(headers.origin)
    kept.prefer = headerValue(headers.prefer)
    kept.preferLength = sentLength(headers.prefer)
    kept.authorization = headers.authorization !== undefined
    kept.cookie = headers.cookie !== undefined
    this.keepAnswer(kept, status, bytes, contentType, version, trouble, draw)
  }

  /** A request Node refused before it was read whole (431, 400, 408): only its line, when it could be read. */
  refused (method: string | null, target: string | null, status: number, bytes: number, version: string | null): void {
    const kept = this.slot()
    kept.at = Date.now()
    kept.durationMs = 0
    kept.method = method
    this.keepTarget(kept, target)
    kept.host = kept.accept = kept.origin = kept.prefer = null
    kept.hostLength = kept.acceptLength = kept.originLength = kept.preferLength = 0
    kept.authorization = kept.cookie = false
    this.keepAnswer(kept, status, bytes, 'application/json', version, null, -1)
  }

  private keepTarget (kept: Kept, target: string | null): void {
    if (target === null) {
      kept.url = null
      kept.urlLength = 0
      return
    }
    // Redacted before it is cut: a secret's value is never half kept.
    const url = redactTarget(target)
    kept.url = bounded(url, URL_CHARS)
    kept.urlLength = url.length
  }

  private keepAnswer (
    kept: Kept, status: number, bytes: number, contentType: string | null, version: string | null,
    trouble: Trouble | null, draw: number
  ): void {
    kept.status = status
    kept.bytes = bytes
    // The service's own: cut only to keep the bound whatever a change file's id.
    kept.contentType = contentType === null ? null : bounded(contentType, HEADER_CHARS)
    kept.version = version === null ? null : bounded(version, HEADER_CHARS)
    kept.draw = draw
    kept.delayMs = trouble?.delayMs ?? 0
    kept.delayBy = trouble?.delayBy ?? null
    kept.failStatus = trouble?.failure?.status ?? 0
    kept.failureBy = trouble?.failureBy ?? null
    kept.fault = trouble?.fault ?? null
    kept.size = RECORD_BYTES + cost(kept.method) + cost(kept.url) + cost(kept.host) + cost(kept.accept) +
      cost(kept.origin) + cost(kept.prefer) + cost(kept.contentType) + cost(kept.version)
    this.held += kept.size
    // The oldest let go until the bytes fit; the newest is always kept.
    while (this.held > this.maxBytes && this.count > 1) this.letGoOldest()
  }

  /** The next record to write: a new one until the ring is full, then the oldest, let go. */
  private slot (): Kept {
    if (this.count === this.size) this.letGoOldest()
    let kept = this.ring[this.head]
    if (kept === undefined) {
      kept = new Kept()
      this.ring.push(kept)
    }
    this.head = (this.head + 1) % this.size
    this.count++
    return kept
  }

  private letGoOldest (): void {
    const oldest = this.ring[(this.head - this.count + this.size) % this.size] as Kept
    this.held -= oldest.size
    oldest.size = 0
    // Its strings go now, not when the slot is next written.
    oldest.method = oldest.url = oldest.host = oldest.accept = oldest.origin = oldest.prefer = null
    oldest.contentType = oldest.version = oldest.delayBy = oldest.failureBy = oldest.fault = null
    this.count--
    this.lost++
  }

  /** Every request forgotten. */
  clear (): void {
    while (this.count > 0) this.letGoOldest()
    this.lost = 0
    this.since = Date.now()
  }

  get tally (): JournalTally {
    return { kept: this.count, bytes: this.held, dropped: this.lost }
  }

  part (): JournalPart {
    return { ...this.tally, since: this.since, entries: this.entries() }
  }

  /** What is kept, newest first (by when each was read). */
  entries (): JournalEntry[] {
    const entries: Array<{ at: number, entry: JournalEntry }> = []
    for (let i = 0; i < this.count; i++) {
      const kept = this.ring[(this.head - this.count + i + this.size) % this.size] as Kept
      entries.push({ at: kept.at, entry: this.entryOf(kept) })
    }
    // Stable: requests read in the same millisecond keep the order they were answered in, newest first.
    return entries.reverse().sort((a, b) => b.at - a.at).map(({ entry }) => entry)
  }

  private entryOf (kept: Kept): JournalEntry {
    const truncated: Record<string, number> = {}
    if (kept.url !== null && kept.urlLength > kept.url.length) truncated.url = kept.urlLength
    for (const [name, value, length] of [
      ['host', kept.host, kept.hostLength], ['accept', kept.accept, kept.acceptLength],
      ['origin', kept.origin, kept.originLength], ['prefer', kept.prefer, kept.preferLength]
    ] as const) {
      if (value !== null && length > value.length) truncated[name] = length
    }
    return {
      at: new Date(Math.floor(kept.at)).toISOString(),
      method: kept.method,
      url: kept.url,
      headers: {
        host: kept.host,
        accept: kept.accept,
        origin: kept.origin,
        prefer: kept.prefer,
        authorization: kept.authorization,
        cookie: kept.cookie
      },
      status: kept.status === 0 ? null : kept.status,
      bytes: kept.bytes,
      durationMs: Math.round(kept.durationMs * 1000) / 1000,
      contentType: kept.contentType,
      version: kept.version,
      thread: this.thread,
      trouble: kept.draw < 0
        ? null
        : {
            draw: kept.draw,
            delay: kept.delayBy === null ? null : { ms: kept.delayMs, by: kept.delayBy },
            failure: kept.failureBy === null ? null : { status: kept.failStatus, by: kept.failureBy },
            fault: kept.fault
          },
      truncated
    }
  }
}
