// The one writer of a page answer onto a Node response, for the fast path and the Fastify route alike.
import type { ServerResponse } from 'node:http'
import type { ViewAnswer } from '../explore/page-answer.js'

export function writeAnswer (response: ServerResponse, answer: ViewAnswer): void {
  response.writeHead(answer.status, answer.headers)
  const { body } = answer
  // A HEAD answer keeps the GET's Content-Length and sends no body (Node would drop one anyway).
  if (body === null || response.req.method === 'HEAD') {
    response.end()
  } else if (Buffer.isBuffer(body)) {
    response.end(body)
  } else {
    // In one tick, so Node sends one writev with the headers (it corks until the next tick); views queued on a
    // slow socket keep their memory alive past a reload (ADRs 004, 011).
    response.write(body.head, 'latin1')
    for (const view of body.items) response.write(view)
    response.end(body.tail)
  }
}
