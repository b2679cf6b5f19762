// `Expect` ignored, as Django ignores it: Node would send an interim 100 Continue (pipelined, between the previous
// answer's head and body) or a bare 417, and no endpoint reads a body.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'

export function ignoreExpectations (server: Server): void {
  const answer = (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response)
  server.on('checkContinue', answer)
  server.on('checkExpectation', answer)
}
