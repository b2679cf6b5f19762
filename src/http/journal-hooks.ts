// Where the request journal hears of answers (ADR 041): page answers from the one writer (fast path and route alike),
// Fastify's other answers when they finish, and the requests Node refuses on the socket before either sees them.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import type { ViewAnswer } from '../explore/page-answer.js'
import type { Trouble } from '../explore/simulated-trouble.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { METHOD_CHARS, type RequestJournal } from './request-journal.js'
import { socketRefusal } from './server-options.js'
import type { AnswerJournal, AnswerWriter } from './troubled-answer.js'

/** `name`'s value in a ViewAnswer's list of names and values. */
function headerOf (headers: readonly string[], name: string): string | null {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1] ?? null
  return null
}

const REQUEST_LINE = new RegExp(`^([A-Z-]{1,${METHOD_CHARS}}) (\\S+)(?: HTTP/\\d\\.\\d)?$`)

/** A refused request's method and target, when its first line could be read: `GET /path HTTP/1.1`. */
function requestLine (packet: Buffer | undefined): { method: string | null, target: string | null } {
  const end = packet?.indexOf('\r\n') ?? -1
  const match = end < 0 ? null : REQUEST_LINE.exec((packet as Buffer).toString('latin1', 0, end))
  return match === null ? { method: null, target: null } : { method: match[1] as string, target: match[2] as string }
}

export class JournalHooks implements AnswerJournal {
  /** Answers the route's writer sent: journaled by the writer, not again when Fastify finishes them. */
  private readonly written = new WeakSet<ServerResponse>()

  /** `carried`: whether a request came in on OPS_PORT, whose traffic is the operator's, not the app's. */
  constructor (
    readonly journal: RequestJournal,
    private readonly snapshot: () => SnapshotModel | null,
    private readonly carried: (request: IncomingMessage) => boolean
  ) {}

  readonly version = (): string | null => this.snapshot()?.info.version ?? null

  readonly answered = (
    response: ServerResponse, started: number, version: string | null, sent: ViewAnswer | null, bytes: number,
    trouble: Trouble | null, draw: number
  ): void => {
    if (this.carried(response.req)) return
    const type = sent === null ? null : headerOf(sent.headers, 'content-type')
    this.journal.record(response.req, started, sent?.status ?? 0, bytes, type, version, trouble, draw)
  }

  /** The Fastify route's writer: its answers marked as journaled. */
  routeWriter (write: AnswerWriter): AnswerWriter {
    return (response, page, answer, written, started) => {
      this.written.add(response)
      write(response, page, answer, written, started)
    }
  }

  /** Fastify's own answers but those under `opsPrefix`, and Node's refusals before Fastify. */
  listen (app: FastifyInstance, opsPrefix: string): void {
    app.addHook('onResponse', (request, reply, done) => {
      const ops = request.url.startsWith(opsPrefix) || request.routeOptions.url?.startsWith(opsPrefix) === true
      if (!ops && !this.written.has(reply.raw) && !this.carried(request.raw)) {
        const length = Number(reply.getHeader('content-length') ?? 0)
        const type = reply.getHeader('content-type')
        this.journal.record(
          request.raw, performance.now() - reply.elapsedTime, reply.statusCode,
          request.method === 'HEAD' || !Number.isSafeInteger(length) ? 0 : length,
          typeof type === 'string' ? type : null, this.version(), null, -1
        )
      }
      done()
    })
    // Before Fastify's own listener, which answers and closes the socket (server-options.ts's refuseOnSocket).
    app.server.prependListener('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
      const refusal = socketRefusal(error, socket)
      if (refusal === null) return
      const { method, target } = requestLine((error as { rawPacket?: Buffer }).rawPacket)
      const bytes = method === 'HEAD' ? 0 : Buffer.byteLength(JSON.stringify(refusal.body))
      this.journal.refused(method, target, refusal.statusCode, bytes, this.version())
    })
  }
}
