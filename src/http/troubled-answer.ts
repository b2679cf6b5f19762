// Acts out a page request's trouble (explore/simulated-trouble.ts) on its Node response, for the fast path
// and the Fastify route alike: the delay on a timer, then a reset, or the answer (the page's, the failure
// that replaces it, or the view's own error) written whole, cut halfway or dribbled, as the fault says.
import type { ServerResponse } from 'node:http'
import type { ViewAnswer } from '../explore/page-answer.js'
import type { SimulatedTrouble, Trouble } from '../explore/simulated-trouble.js'
import { writeAnswer } from './write-answer.js'

/** A dribbled body goes out in pieces this large, this far apart: about 10 KB/s, a slow mobile link. */
export const DRIBBLE_PIECE_BYTES = 512
export const DRIBBLE_GAP_MS = 50

export interface TroubledRequest {
  response: ServerResponse
  trouble: Trouble
  /** The page answer made for the request, or the view's error that refused it. */
  answer: ViewAnswer | Error
  /** Called before this writer writes anything: the response is its own from then on (the route hijacks its reply). */
  take: () => void
  /** Sends the view's error as the path sends errors (Fastify's error handler); only a reset breaks it. */
  refuse: (error: Error) => void
  /** Called once an answer has been written whole (not after a reset or a cut). */
  written: (answer: ViewAnswer) => void
}

export function answerWithTrouble (troubles: SimulatedTrouble, request: TroubledRequest): void {
  const { delayMs } = request.trouble
  if (delayMs === 0) {
    act(troubles, request)
    return
  }
  troubles.countDelay(delayMs)
  troubles.wait(delayMs, request.response, () => act(troubles, request))
}

function act (troubles: SimulatedTrouble, { response, trouble, answer, take, refuse, written }: TroubledRequest): void {
  const { fault, failure } = trouble
  if (fault === 'reset') {
    take()
    troubles.countFault('reset')
    // An RST, not a FIN: the client reads ECONNRESET, as from a connection dropped on the way.
    if (response.socket === null) response.destroy()
    else response.socket.resetAndDestroy()
    return
  }
  const chosen = failure ?? answer
  if (failure !== null) troubles.countFailure(failure.status)
  if (chosen instanceof Error) {
    refuse(chosen)
    return
  }
  take()
  if (fault === 'truncate') {
    troubles.countFault('truncate')
    cut(response, chosen)
  } else if (fault === 'dribble') {
    troubles.countFault('dribble')
    dribble(troubles, response, chosen, () => written(chosen))
  } else {
    writeAnswer(response, chosen)
    written(chosen)
  }
}

/** The bytes the answer's body would be on the wire: none for a HEAD or a 304. */
function bodyBytes (response: ServerResponse, { body }: ViewAnswer): Buffer {
  if (body === null || response.req.method === 'HEAD') return Buffer.alloc(0)
  if (Buffer.isBuffer(body)) return body
  return Buffer.concat([Buffer.from(body.head, 'latin1'), ...body.items, body.tail], body.byteLength)
}

/**
 * The headers and the first half of the body, then the connection closed (a FIN once that half is sent):
 * the client reads fewer bytes than Content-Length says. An answer without a body goes out whole, and its
 * connection is closed after it.
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
