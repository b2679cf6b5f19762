// CORS headers for answers written outside Fastify (ADR 002): exactly @fastify/cors's, as a test checks.

/** CORS_ORIGIN; false: no CORS headers at all. */
export type CorsPolicy = '*' | readonly string[] | false

/** Whether answers must be cached per Origin. */
export function corsVaries (policy: CorsPolicy): boolean {
  return Array.isArray(policy)
}

/** A listed policy also needs `Vary: Origin`, which the page answer writes. */
export function allowedOrigin (policy: CorsPolicy, origin: string | undefined): string | null {
  if (policy === false) return null
  if (policy === '*') return '*'
  if (policy.includes('*')) return '*'
  return origin !== undefined && policy.includes(origin) ? origin : null
}
