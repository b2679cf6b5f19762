// Headers shared by the load generator, the ceiling and the bench runner (no imports: the ceiling loads it).

// What a browser's fetch() of a JSON API sends; the service negotiates on it.
export const REQUEST_HEADERS: Readonly<Record<string, string>> = { accept: 'application/json' }

// Headers Node and Fastify write themselves; every other header of the service's answer is replayed.
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])

/** The headers of one of the service's answers that the ceiling sends along with its bytes. */
export function replayedHeaders (headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  headers.forEach((value, name) => { if (!OWN_HEADERS.has(name)) out[name] = value })
  return out
}
