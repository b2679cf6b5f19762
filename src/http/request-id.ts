// Request ids for Fastify (its `genReqId`) and for the fast path alike, so ids stay unique across both.
// Fastify's own generator, kept to a small integer for the same reason it does.
let nextId = 0

export function nextRequestId (): string {
  nextId = (nextId + 1) & 0x7fffffff
  return `req-${nextId.toString(36)}`
}
