// When a failed request is tried again: which answers, after what backoff, and how Retry-After is read and capped.

export const RETRY_AFTER_CAP_MS = 60_000
export const BACKOFF_CAP_MS = 30_000

/** 429 (slow down) and every 5xx (the source or a proxy in front of it is struggling) are tried again. */
export function isRetryableStatus (status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599)
}

/** Random up to `baseMs` · 2^(retry-1), capped: full jitter, so workers that failed together come back apart. */
export function backoffDelay (retry: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, baseMs * 2 ** Math.max(0, retry - 1))
  return Math.round(ceiling * random())
}

/** Retry-After (RFC 9110 §10.2.3) in ms from `now`; null when absent or unreadable, 0 for a date past. */
export function parseRetryAfter (value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // HTTP's date forms all start with a weekday; a number with a sign or a decimal point is no date.
  if (!/^[A-Za-z]{3}/.test(text)) return null
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}
