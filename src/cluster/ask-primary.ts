// A worker's questions to its primary (primary.ts): the cluster's metrics, an operator's action, leave to
// load within the memory budget. Each carries a request number that the primary's answer carries back; one
// listener on the IPC channel hands each answer to the question waiting for it.
import { isExploreMessage, type ToPrimary, type ToWorker } from './messages.js'

/** The primary's answers to a worker's questions (its own requests, `reload` and `serve`, are not here). */
type Answer = Extract<ToWorker, { explore: 'metrics' | 'memory' | 'versions' }>
type Kind = Answer['explore']

const waiting = new Map<number, { kind: Kind, answer: (said: Answer | null) => void }>()
let nextRequest = 1
let listening = false

function listen (): void {
  if (listening) return
  listening = true
  process.on('message', (message: unknown) => {
    if (!isExploreMessage(message)) return
    const said = message as ToWorker
    if (!('request' in said) || said.request === undefined) return
    const asked = waiting.get(said.request)
    if (asked === undefined || asked.kind !== said.explore) return
    waiting.delete(said.request)
    asked.answer(said as Answer)
  })
}

/**
 * Asks the primary and waits for its answer: `fields` are the question's own, `request` is filled in here.
 * Resolves null when no answer comes within `timeoutMs` (none given: it waits as long as it takes).
 * Returns the request number too: some questions are followed by a message about the same request.
 */
export async function askPrimary<K extends Kind> (
  kind: K,
  fields: Omit<Extract<ToPrimary, { explore: K }>, 'explore' | 'request'>,
  timeoutMs?: number
): Promise<{ request: number, answer: Extract<Answer, { explore: K }> | null }> {
  listen()
  const request = nextRequest++
  const answer = await new Promise<Answer | null>(resolve => {
    const timer = timeoutMs === undefined ? null : setTimeout(() => { waiting.delete(request); resolve(null) }, timeoutMs)
    timer?.unref()
    waiting.set(request, {
      kind,
      answer: said => {
        if (timer !== null) clearTimeout(timer)
        resolve(said)
      }
    })
    tellPrimary({ explore: kind, request, ...fields } as unknown as ToPrimary)
  })
  return { request, answer: answer as Extract<Answer, { explore: K }> | null }
}

/** Sends a message to the primary; a worker whose primary is gone has nobody to tell (it is about to stop). */
export function tellPrimary (message: ToPrimary): void {
  if (process.connected) process.send?.(message)
}
