// `Expect` ignored, as by Django: Node would send a 100 Continue or a bare 417, and no endpoint reads a body.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'

export function ignoreExpectations (server: Server): void {
  const answer = (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response)
  server.on('checkContinue', answer)
  server.on('checkExpectation', answer)
}
