// Request ids for both paths, unique across the process's threads (a serving thread's carry its number).
import { threadId } from 'node:worker_threads'

const PREFIX = threadId === 0 ? 'req-' : `req-${threadId.toString(36)}-`
let nextId = 0

export function nextRequestId (): string {
  nextId = (nextId + 1) & 0x7fffffff
  return `${PREFIX}${nextId.toString(36)}`
}
