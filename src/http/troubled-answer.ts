// The page answer writer for both paths, with the simulated trouble (simulated-trouble.ts) acted out around it.
import type { ServerResponse } from 'node:http'
import type { ViewAnswer } from '../explore/page-answer.js'
import type { PageRequest } from '../explore/page-request.js'
import type { SimulatedTrouble, Trouble } from '../explore/simulated-trouble.js'
import { writeAnswer } from './write-answer.js'

/** About 10 KB/s, a slow mobile link. */
const DRIBBLE_PIECE_BYTES = 512
const DRIBBLE_GAP_MS = 50

export type AnswerWriter = (
  response: ServerResponse, page: PageRequest | null, answer: ViewAnswer, written: Written
) => void
/** Not called after a reset or a cut. */
type Written = (answer: ViewAnswer) => void

export function answerWriter (troubles: SimulatedTrouble | null): AnswerWriter {
  if (troubles === null) return plainWriter
  return (response, page, answer, written) => {
    // Refused before the view: no trouble drawn, as in the original's.
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
    // An RST, not a FIN: the client reads ECONNRESET.
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

function bodyBytes (response: ServerResponse, { body }: ViewAnswer): Buffer {
  if (body === null || response.req.method === 'HEAD') return Buffer.alloc(0)
  if (Buffer.isBuffer(body)) return body
  return Buffer.concat([Buffer.from(body.head, 'latin1'), ...body.items, body.tail], body.byteLength)
}

/** Headers and half the body, then a FIN: fewer bytes than Content-Length says. */
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
