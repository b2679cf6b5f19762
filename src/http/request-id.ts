// Request ids for Fastify (its `genReqId`) and for the fast path alike, so ids stay unique across both.
// Fastify's own generator, kept to a small integer for the same reason it does.
// A serving thread's ids carry its number, so that ids stay unique across the threads of one process.
import { threadId } from 'node:worker_threads'

const PREFIX = threadId === 0 ? 'req-' : `req-${threadId.toString(36)}-`
let nextId = 0

export function nextRequestId (): string {
  nextId = (nextId + 1) & 0x7fffffff
  return `${PREFIX}${nextId.toString(36)}`
}
