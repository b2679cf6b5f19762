// The control's answers to operator pages forwarded by a serving thread without OPS_PORT (ADR 029).
import type { Worker } from 'node:worker_threads'
import { controlUnavailable } from '../errors.js'
import type { ForwardedAnswer, ForwardedRequest, ToThread } from './messages.js'

/** The control app's `inject`. */
export type ForwardOps = (request: ForwardedRequest) => Promise<{
  statusCode: number, headers: ForwardedAnswer['headers'], rawPayload: Buffer
}>

/** To the thread that asked, not one started in its place since. */
export function answerForwarded (worker: Worker, id: number, request: ForwardedRequest, forward: ForwardOps): void {
  const reply = (answer: ForwardedAnswer): void => {
    worker.postMessage({ type: 'answer', id, answer } satisfies ToThread)
  }
  forward(request).then(
    ({ statusCode, headers, rawPayload }) => { reply({ statusCode, headers, body: rawPayload }) },
    () => {
      // inject refuses while the control closes: a closing server's 503.
      const refusal = controlUnavailable()
      reply({
        statusCode: refusal.statusCode,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: Buffer.from(JSON.stringify(refusal.body))
      })
    }
  )
}
