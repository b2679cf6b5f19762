// What the request journal answers and takes: GET /-/requests (its filters), DELETE /-/requests, and the HAR 1.2 of
// GET /-/requests.har (the fields it writes).
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './content-item.js'

const Cause = Type.Union([
  Type.Literal('DELAY_MS'), Type.Literal('FAIL_RATE'), Type.Literal('Prefer'), Type.Literal('__delay'),
  Type.Literal('__status'), Type.Literal('__code')
], { description: 'Why: the option\'s draw (DELAY_MS, FAIL_RATE), or what the request asked for under CHAOS.' })

export const JournalTroubleSchema = Type.Object({
  draw: Type.Integer({
    description: 'Which draw of the seed it was. CHAOS_REPLAY=request: how many times the same request was asked for before it (0: the first); order: how many page requests drew before it.'
  }),
  delay: Nullable(Type.Object({ ms: Type.Integer(), by: Cause }), { description: 'The wait before its answer.' }),
  failure: Nullable(Type.Object({ status: Type.Integer(), by: Cause }), {
    description: 'The failure answered instead of its page.'
  }),
  fault: Nullable(Type.Union([Type.Literal('reset'), Type.Literal('truncate'), Type.Literal('dribble')]), {
    description: 'FAULT: how its connection was broken (a view\'s error goes out whole: only a reset breaks it).'
  })
}, { description: 'The simulated trouble drawn for a page request; null when none was drawn (trouble off, or not a page).' })

export const JournalEntrySchema = Type.Object({
  at: Type.String({ description: 'When the request was read (ISO-8601, milliseconds).' }),
  method: Nullable(Type.String(), { description: 'null: a request refused before its line could be read.' }),
  url: Nullable(Type.String({
    description: 'The target as sent: query values whose field name looks like a secret, and user info, replaced by `[redacted]`; cut at 1,024 characters.'
  })),
  headers: Type.Object({
    host: Nullable(Type.String()),
    accept: Nullable(Type.String()),
    origin: Nullable(Type.String()),
    prefer: Nullable(Type.String()),
    authorization: Type.Boolean({ description: 'Whether it had an Authorization header (its value is never kept).' }),
    cookie: Type.Boolean({ description: 'Whether it had a Cookie header (its value is never kept).' })
  }, { description: 'Header values as sent, each cut at 256 characters; null when absent.' }),
  status: Nullable(Type.Integer(), { description: 'null: no answer was sent (a reset connection).' }),
  bytes: Type.Integer({ description: 'Body bytes handed to the socket (half the body for a cut answer, 0 for a HEAD).' }),
  durationMs: Type.Number({ description: 'From the request read to its last byte handed to the socket, or its connection broken; delays included.' }),
  contentType: Nullable(Type.String()),
  version: Nullable(Type.String(), { description: 'The snapshot version served when it was answered.' }),
  thread: Nullable(Type.Integer(), { description: 'The serving thread that answered it (WORKERS > 1); null with one thread.' }),
  trouble: Nullable(JournalTroubleSchema),
  truncated: Type.Record(Type.String(), Type.Integer(), {
    description: 'The values cut to their bound, each with its length as sent: `{"url": 15360}`; empty when none was.'
  })
}, { title: 'JournalEntry' })

export type JournalEntry = Static<typeof JournalEntrySchema>

export const JournalStateSchema = Type.Object({
  size: Type.Integer({ description: 'REQUEST_JOURNAL_SIZE: the requests kept, per serving thread.' }),
  maxBytes: Type.Integer({ description: 'The bytes the journal may hold, every serving thread\'s together.' }),
  kept: Type.Integer({ description: 'Requests kept now (before any filter).' }),
  bytes: Type.Integer({ description: 'Bytes they hold, as the journal counts them (strings at 2 bytes a character).' }),
  dropped: Type.Integer({ description: 'Requests let go since `since`, the oldest first, to stay within the bounds.' }),
  since: Type.String({ description: 'When the journal started, or was last reset (DELETE /-/requests).' }),
  threads: Type.Integer({ description: 'The journals read: one per serving thread.' }),
  trouble: Nullable(Type.Object({
    seed: Type.Integer(),
    replay: Type.Union([Type.Literal('request'), Type.Literal('order')])
  }), { description: 'The seed of the trouble drawn and what it follows (CHAOS_REPLAY); null without trouble.' })
}, { title: 'JournalState' })

export type JournalState = Static<typeof JournalStateSchema>

export const JournalSchema = Type.Object({
  journal: JournalStateSchema,
  requests: Type.Array(JournalEntrySchema, { description: 'The requests that pass the filters, newest first.' })
}, { title: 'RequestJournal' })

export type Journal = Static<typeof JournalSchema>

export const JournalResetSchema = Type.Object({ journal: JournalStateSchema }, { title: 'JournalReset' })

// Documented, never validated by Fastify: requests-route.ts reads them and answers a 400 that says which is wrong.
export const JournalQuerySchema = Type.Object({
  path: Type.Optional(Type.String({ description: 'Only requests for this path (without the query), exactly.' })),
  method: Type.Optional(Type.String({ description: 'Only requests of this method (GET, HEAD, OPTIONS…).' })),
  status: Type.Optional(Type.String({
    description: 'Only answers of this status (`503`) or class (`5xx`); `none` for connections reset with no answer.'
  })),
  query: Type.Optional(Type.Array(Type.String(), {
    description: 'Only requests whose query has this field (`companies`) or this field with this value (`companies=3`, as Django decodes it); repeat for all of several.'
  })),
  since: Type.Optional(Type.String({ description: 'Only requests read at or after this instant (ISO-8601).' })),
  limit: Type.Optional(Type.String({ description: 'At most this many, the newest.' }))
})

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) as written by GET /-/requests.har: every field the
// format requires, and the journal's own as `_` fields, which the format allows.
const NameValue = Type.Object({ name: Type.String(), value: Type.String() })

export const HarEntrySchema = Type.Object({
  startedDateTime: Type.String(),
  time: Type.Number(),
  request: Type.Object({
    method: Type.String(),
    url: Type.String(),
    httpVersion: Type.String(),
    cookies: Type.Array(NameValue),
    headers: Type.Array(NameValue),
    queryString: Type.Array(NameValue),
    headersSize: Type.Integer(),
    bodySize: Type.Integer()
  }),
  response: Type.Object({
    status: Type.Integer(),
    statusText: Type.String(),
    httpVersion: Type.String(),
    cookies: Type.Array(NameValue),
    headers: Type.Array(NameValue),
    content: Type.Object({ size: Type.Integer(), mimeType: Type.String() }),
    redirectURL: Type.String(),
    headersSize: Type.Integer(),
    bodySize: Type.Integer(),
    _error: Type.Optional(Type.String())
  }),
  cache: Type.Object({}),
  timings: Type.Object({
    blocked: Type.Number(),
    dns: Type.Number(),
    connect: Type.Number(),
    send: Type.Number(),
    wait: Type.Number(),
    receive: Type.Number(),
    ssl: Type.Number()
  }),
  _version: Nullable(Type.String()),
  _thread: Nullable(Type.Integer()),
  _trouble: Nullable(JournalTroubleSchema),
  _truncated: Type.Record(Type.String(), Type.Integer())
})

export const HarSchema = Type.Object({
  log: Type.Object({
    version: Type.Literal('1.2'),
    creator: Type.Object({ name: Type.String(), version: Type.String() }),
    entries: Type.Array(HarEntrySchema)
  })
}, { title: 'Har', description: 'HAR 1.2, as browsers\' developer tools import it.' })

export type Har = Static<typeof HarSchema>
