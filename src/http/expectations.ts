// `Expect` headers as Django sees them: ignored. Node would answer `Expect: 100-continue` with an interim
// "100 Continue" (which, pipelined, it writes between the head and the body of the previous answer) and any
// other expectation with a bare, bodiless 417. No endpoint reads a body, so every request is simply answered.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'

export function ignoreExpectations (server: Server): void {
  const answer = (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response)
  server.on('checkContinue', answer)
  server.on('checkExpectation', answer)
}
