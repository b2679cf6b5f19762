// The CORS headers of a simple request, for page answers written outside Fastify's reply (ADR 002): exactly what
// @fastify/cors adds for the same options (index.js, addCorsHeadersHandler), as a test checks.

/** CORS_ORIGIN: any origin, these origins, or none (no CORS headers at all). */
export type CorsPolicy = '*' | readonly string[] | false

/** Whether answers depend on the request's Origin (and so must be cached per Origin). */
export function corsVaries (policy: CorsPolicy): boolean {
  return Array.isArray(policy)
}

/**
 * `Access-Control-Allow-Origin` for a request from `origin`, or null for none (CORS off, or an origin not
 * listed). A listed policy also needs `Vary: Origin`, which the page answer writes with its own Vary.
 */
export function allowedOrigin (policy: CorsPolicy, origin: string | undefined): string | null {
  if (policy === false) return null
  if (policy === '*') return '*'
  if (policy.includes('*')) return '*'
  return origin !== undefined && policy.includes(origin) ? origin : null
}
