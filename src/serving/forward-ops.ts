// The operator's pages (`/-/`) a serving thread forwards to the control when there is no OPS_PORT (ADR 029): the
// control's app answers each, and the answer goes back under the id the thread asked with (requests-by-id.ts).
import type { Worker } from 'node:worker_threads'
import { controlUnavailable } from '../errors.js'
import type { ForwardedAnswer, ForwardedRequest, ToThread } from './messages.js'

/** Answers an operator's page forwarded by a thread (the control app's `inject`). */
export type ForwardOps = (request: ForwardedRequest) => Promise<{
  statusCode: number, headers: ForwardedAnswer['headers'], rawPayload: Buffer
}>

/** Answers a forwarded request to the thread that asked: not a thread started after it in its place. */
export function answerForwarded (worker: Worker, id: number, request: ForwardedRequest, forward: ForwardOps): void {
  const reply = (answer: ForwardedAnswer): void => {
    worker.postMessage({ type: 'answer', id, answer } satisfies ToThread)
  }
  forward(request).then(
    ({ statusCode, headers, rawPayload }) => { reply({ statusCode, headers, body: rawPayload }) },
    () => {
      // The control closing (inject refuses then): the 503 a closing server gives.
      const refusal = controlUnavailable()
      reply({
        statusCode: refusal.statusCode,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: Buffer.from(JSON.stringify(refusal.body))
      })
    }
  )
}
