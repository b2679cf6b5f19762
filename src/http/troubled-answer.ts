// The writer of page answers, chosen once for both paths: the plain one, or with simulated trouble acted out
// around it (explore/simulated-trouble.ts): a delay, then a reset, or the answer whole, cut halfway or dribbled.
import type { ServerResponse } from 'node:http'
import type { ViewAnswer } from '../explore/page-answer.js'
import type { PageRequest } from '../explore/page-request.js'
import type { SimulatedTrouble, Trouble } from '../explore/simulated-trouble.js'
import { writeAnswer } from './write-answer.js'

/** A dribbled body goes out in pieces this large, this far apart: about 10 KB/s, a slow mobile link. */
const DRIBBLE_PIECE_BYTES = 512
const DRIBBLE_GAP_MS = 50

/** Writes a page request's answer: the one writer, or trouble around it. Chosen once, at startup. */
export type AnswerWriter = (
  response: ServerResponse, page: PageRequest | null, answer: ViewAnswer, written: Written
) => void
/** Called once an answer has been written whole (not after a reset or a cut). */
type Written = (answer: ViewAnswer) => void

/** The writer of every page answer: `writeAnswer`, or with `troubles`, the trouble drawn for each request. */
export function answerWriter (troubles: SimulatedTrouble | null): AnswerWriter {
  if (troubles === null) return plainWriter
  return (response, page, answer, written) => {
    // Django refused it before the view: no trouble is drawn for it, as none would be in the original's view.
    const trouble = answer.error === 'refusal' || page === null ? null : troubles.draw(page, response.req.url as string)
    if (trouble === null) plainWriter(response, page, answer, written)
    else if (trouble.delayMs === 0) act(troubles, response, trouble, answer, written)
    else {
      troubles.countDelay(trouble.delayMs)
      troubles.wait(trouble.delayMs, response, () => act(troubles, response, trouble, answer, written))
    }
  }
}

const plainWriter: AnswerWriter = (response, _page, answer, written) => {
  writeAnswer(response, answer)
  written(answer)
}

function act (
  troubles: SimulatedTrouble, response: ServerResponse, trouble: Trouble, answer: ViewAnswer, written: Written
): void {
  const { fault, failure } = trouble
  if (fault === 'reset') {
    troubles.countFault('reset')
    // An RST, not a FIN: the client reads ECONNRESET, as from a connection dropped on the way.
    if (response.socket === null) response.destroy()
    else response.socket.resetAndDestroy()
    return
  }
  const chosen = failure ?? answer
  if (failure !== null) troubles.countFailure(failure.status)
  // The view's own error goes out whole: only a reset breaks it.
  const breaks = failure === null && answer.error === 'view' ? null : fault
  if (breaks === 'truncate') {
    troubles.countFault('truncate')
    cut(response, chosen)
  } else if (breaks === 'dribble') {
    troubles.countFault('dribble')
    dribble(troubles, response, chosen, () => written(chosen))
  } else {
    plainWriter(response, null, chosen, written)
  }
}

/** The bytes the answer's body would be on the wire: none for a HEAD or a 304. */
function bodyBytes (response: ServerResponse, { body }: ViewAnswer): Buffer {
  if (body === null || response.req.method === 'HEAD') return Buffer.alloc(0)
  if (Buffer.isBuffer(body)) return body
  return Buffer.concat([Buffer.from(body.head, 'latin1'), ...body.items, body.tail], body.byteLength)
}

/**
 * The headers and half the body, then a FIN: the client reads fewer bytes than Content-Length says. An answer
 * without a body goes out whole, then its connection closes.
 */
function cut (response: ServerResponse, answer: ViewAnswer): void {
  const socket = response.socket
  const body = bodyBytes(response, answer)
  const half = body.subarray(0, Math.floor(body.length / 2))
  response.writeHead(answer.status, answer.headers)
  if (half.length === 0) {
    response.end(() => socket?.destroy())
    return
  }
  response.write(half, () => socket?.destroy())
}

/** The headers at once, then the body in small pieces on timers; complete in the end. */
function dribble (troubles: SimulatedTrouble, response: ServerResponse, answer: ViewAnswer, done: () => void): void {
  const body = bodyBytes(response, answer)
  response.writeHead(answer.status, answer.headers)
  let sent = 0
  const next = (): void => {
    const piece = body.subarray(sent, sent + DRIBBLE_PIECE_BYTES)
    sent += DRIBBLE_PIECE_BYTES
    // The last piece ends the answer: a client that has read Content-Length bytes may close at once.
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
