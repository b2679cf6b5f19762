// GET /-/requests (and .har): what the app asked for, from the request journal of this thread or of every serving
// thread; DELETE /-/requests forgets it and starts the simulated trouble over, between tests (ADR 041).
import type { FastifyInstance } from 'fastify'
import { journalOff } from '../errors.js'
import type { QueryDict } from '../explore/query-string.js'
import { journalHar } from '../http/journal-har.js'
import type { JournalPart, JournalTally } from '../http/request-journal.js'
import { ErrorDetailSchema } from '../schemas/explore-response.js'
import {
  HarSchema, JournalQuerySchema, JournalResetSchema, JournalSchema, type Har, type Journal, type JournalEntry,
  type JournalState
} from '../schemas/request-journal.js'
import { filtered, readFilter } from './journal-filter.js'

const answers = {
  400: { ...ErrorDetailSchema, description: 'A filter is unknown or its value is not one it takes.' },
  404: { ...ErrorDetailSchema, description: 'The journal is off (REQUEST_JOURNAL).' }
}

export async function requestsRoutes (app: FastifyInstance): Promise<void> {
  /** Every journal's part; `reset`: each forgets what it kept first. */
  const parts = async (reset: boolean): Promise<{ parts: JournalPart[], maxBytes: number }> => {
    const journal = app.requestJournal
    if (journal === null) throw journalOff()
    if (app.servingPool !== null) {
      const threads = await app.servingPool.journalParts(reset)
      return { parts: threads, maxBytes: journal.maxBytes * app.servingPool.size }
    }
    if (reset) journal.clear()
    return { parts: [journal.part()], maxBytes: journal.maxBytes }
  }

  const state = (read: { parts: JournalPart[], maxBytes: number }): JournalState => {
    const sum = (key: keyof JournalTally): number => read.parts.reduce((total, part) => total + part[key], 0)
    const trouble = app.trouble
    return {
      size: app.requestJournal?.size ?? 0,
      maxBytes: read.maxBytes,
      kept: sum('kept'),
      bytes: sum('bytes'),
      dropped: sum('dropped'),
      since: new Date(Math.min(...read.parts.map(part => part.since), Date.now())).toISOString(),
      threads: read.parts.length,
      trouble: trouble === null ? null : { seed: trouble.seed, replay: trouble.replay }
    }
  }

  /** Every journal's entries that pass the request's filters, newest first. */
  const matching = (read: { parts: JournalPart[] }, query: unknown): JournalEntry[] => {
    const filter = readFilter(query as QueryDict)
    // Stable: each part is newest first already.
    const all = read.parts.flatMap(part => part.entries).sort((a, b) => Date.parse(b.at) - Date.parse(a.at))
    return filtered(all, filter)
  }

  app.get('/-/requests', {
    validatorCompiler: () => () => true,
    schema: {
      summary: 'The requests the public port answered, newest first (the request journal)',
      querystring: JournalQuerySchema,
      response: { 200: JournalSchema, ...answers }
    }
  }, async (request): Promise<Journal> => {
    // The filters first: a bad one costs no thread a question.
    readFilter(request.query as QueryDict)
    const read = await parts(false)
    return { journal: state(read), requests: matching(read, request.query) }
  })

  app.get('/-/requests.har', {
    validatorCompiler: () => () => true,
    schema: {
      summary: 'The same requests as HAR 1.2, which browsers\' developer tools open',
      querystring: JournalQuerySchema,
      response: { 200: HarSchema, ...answers }
    }
  }, async (request, reply): Promise<Har> => {
    readFilter(request.query as QueryDict)
    const read = await parts(false)
    reply.header('content-disposition', 'attachment; filename="explore-requests.har"')
    return journalHar(matching(read, request.query))
  })

  app.delete('/-/requests', {
    schema: {
      summary: 'Forget every request kept, and start the simulated trouble over (between tests)',
      response: { 200: JournalResetSchema, 404: answers[404] }
    }
  }, async (): Promise<{ journal: JournalState }> => {
    if (app.requestJournal === null) throw journalOff()
    // Every request's askings from zero (the threads share them), the order's sequence from its start.
    app.trouble?.restart()
    return { journal: state(await parts(true)) }
  })
}
