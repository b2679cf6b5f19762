// The one writer of a page answer onto a Node response, for the fast path and the Fastify route alike.
import type { ServerResponse } from 'node:http'
import type { PageAnswer } from '../explore/page-answer.js'

export function writeAnswer (response: ServerResponse, answer: PageAnswer): void {
  response.writeHead(answer.status, answer.headers)
  const { body } = answer
  // A HEAD answer keeps the GET's Content-Length and sends no body (Node would drop one anyway).
  if (body === null || response.req.method === 'HEAD') {
    response.end()
  } else if (Buffer.isBuffer(body)) {
    response.end(body)
  } else {
    // The views stay queued until the socket takes them: the model they are in must not be freed before
    // (a reload retires it). The response's 'close' comes once it is sent or its connection is gone; but
    // one pipelined behind another never gets it if the client leaves first, so the socket's counts too.
    const giveBack = body.memory.lend()
    const socket = response.req.socket
    const done = () => {
      giveBack()
      socket.off('close', done)
      response.off('close', done)
    }
    response.once('close', done)
    socket.once('close', done)
    // Written in one tick, so Node sends them in one writev with the headers (it corks the socket on the
    // first write until the next tick).
    response.write(body.head, 'latin1')
    for (const view of body.items) response.write(view)
    response.end(body.tail)
  }
}
