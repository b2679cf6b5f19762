// Request ids for Fastify (`genReqId`) and the fast path alike, kept to a small integer as Fastify's own; a serving
// thread's carry its number, so ids stay unique across both paths and every thread of the process.
import { threadId } from 'node:worker_threads'

const PREFIX = threadId === 0 ? 'req-' : `req-${threadId.toString(36)}-`
let nextId = 0

export function nextRequestId (): string {
  nextId = (nextId + 1) & 0x7fffffff
  return `${PREFIX}${nextId.toString(36)}`
}
