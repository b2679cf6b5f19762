// The page answer writer for both paths, with the simulated trouble (simulated-trouble.ts) acted out around it.
import type { ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { ViewAnswer } from '../explore/page-answer.js'
import type { PageRequest } from '../explore/page-request.js'
import type { SimulatedTrouble, Trouble } from '../explore/simulated-trouble.js'
import { writeAnswer } from './write-answer.js'

/** About 10 KB/s, a slow mobile link. */
const DRIBBLE_PIECE_BYTES = 512
const DRIBBLE_GAP_MS = 50

/** `started`: `performance.now()` when the request was read (the fast path's); now, when not given. */
export type AnswerWriter = (
  response: ServerResponse, page: PageRequest | null, answer: ViewAnswer, written: Written, started?: number
) => void
/** Not called after a reset or a cut. */
type Written = (answer: ViewAnswer) => void

/** Told of every answer once it is over (the request journal, ADR 041). */
export interface AnswerJournal {
  /** The version served now: read when the answer is written, kept through its delay. */
  version: () => string | null
  /** `sent` null: no answer (a reset); `bytes`: the body handed to the socket; `draw` -1: no trouble drawn. */
  answered: (
    response: ServerResponse, started: number, version: string | null, sent: ViewAnswer | null, bytes: number,
    trouble: Trouble | null, draw: number
  ) => void
}

export function answerWriter (troubles: SimulatedTrouble | null, journal: AnswerJournal | null = null): AnswerWriter {
  if (troubles === null) {
    if (journal === null) return plainWriter
    return (response, page, answer, written, started = performance.now()) => {
      plainWriter(response, page, answer, written)
      journal.answered(response, started, journal.version(), answer, bodyLength(response, answer), null, -1)
    }
  }
  return (response, page, answer, written, started = performance.now()) => {
    // Refused before the view: no trouble drawn, as in the original's.
    const trouble = answer.error === 'refusal' || page === null
      ? null
      : troubles.draw(page, response.req.url as string, response.req.method)
    const draw = answer.error === 'refusal' || page === null ? -1 : troubles.lastDraw
    const version = journal?.version() ?? null
    const over: Over = journal === null
      ? ignored
      : (sent, bytes) => { journal.answered(response, started, version, sent, bytes, trouble, draw) }
    if (trouble === null) {
      plainWriter(response, page, answer, written)
      over(answer, bodyLength(response, answer))
    } else if (trouble.delayMs === 0) act(troubles, response, trouble, answer, written, over)
    else {
      troubles.countDelay(trouble.delayMs)
      troubles.wait(trouble.delayMs, response, () => act(troubles, response, trouble, answer, written, over))
    }
  }
}

/** An answer over: what was sent (null: nothing, the connection reset) and the body bytes handed to the socket. */
type Over = (sent: ViewAnswer | null, bytes: number) => void
const ignored: Over = () => {}

const plainWriter: AnswerWriter = (response, _page, answer, written) => {
  writeAnswer(response, answer)
  written(answer)
}

function act (
  troubles: SimulatedTrouble, response: ServerResponse, trouble: Trouble, answer: ViewAnswer, written: Written,
  over: Over
): void {
  const { fault, failure } = trouble
  if (fault === 'reset') {
    troubles.countFault('reset')
    // An RST, not a FIN: the client reads ECONNRESET.
    if (response.socket === null) response.destroy()
    else response.socket.resetAndDestroy()
    over(null, 0)
    return
  }
  const chosen = failure ?? answer
  if (failure !== null) troubles.countFailure(failure.status)
  // The view's own error goes out whole: only a reset breaks it.
  const breaks = failure === null && answer.error === 'view' ? null : fault
  if (breaks === 'truncate') {
    troubles.countFault('truncate')
    over(chosen, cut(response, chosen))
  } else if (breaks === 'dribble') {
    troubles.countFault('dribble')
    dribble(troubles, response, chosen, () => {
      written(chosen)
      over(chosen, bodyLength(response, chosen))
    })
  } else {
    plainWriter(response, null, chosen, written)
    over(chosen, bodyLength(response, chosen))
  }
}

/** What `writeAnswer` sends of the body: none for a HEAD. */
function bodyLength (response: ServerResponse, { body }: ViewAnswer): number {
  if (body === null || response.req.method === 'HEAD') return 0
  return Buffer.isBuffer(body) ? body.length : body.byteLength
}

function bodyBytes (response: ServerResponse, { body }: ViewAnswer): Buffer {
  if (body === null || response.req.method === 'HEAD') return Buffer.alloc(0)
  if (Buffer.isBuffer(body)) return body
  return Buffer.concat([Buffer.from(body.head, 'latin1'), ...body.items, body.tail], body.byteLength)
}

/** Headers and half the body, then a FIN: fewer bytes than Content-Length says. The bytes sent. */
function cut (response: ServerResponse, answer: ViewAnswer): number {
  const socket = response.socket
  const body = bodyBytes(response, answer)
  const half = body.subarray(0, Math.floor(body.length / 2))
  response.writeHead(answer.status, answer.headers)
  if (half.length === 0) {
    response.end(() => socket?.destroy())
    return 0
  }
  response.write(half, () => socket?.destroy())
  return half.length
}

function dribble (troubles: SimulatedTrouble, response: ServerResponse, answer: ViewAnswer, done: () => void): void {
  const body = bodyBytes(response, answer)
  response.writeHead(answer.status, answer.headers)
  let sent = 0
  const next = (): void => {
    const piece = body.subarray(sent, sent + DRIBBLE_PIECE_BYTES)
    sent += DRIBBLE_PIECE_BYTES
    // A client that has read Content-Length bytes may close at once.
    if (sent >= body.length) {
      response.end(piece)
      done()
      return
    }
    response.write(piece)
    troubles.wait(DRIBBLE_GAP_MS, response, next)
  }
  next()
}
