// GETs JSON from the capture's source through the gate (concurrency, rate, Retry-After pauses), retrying 5xx,
// 429, network errors and timeouts with backoff; any other answer ends the capture with the URL named.
import { RequestGate, pauseFor } from './request-gate.js'
import { RETRY_AFTER_CAP_MS, backoffDelay, isRetryableStatus, parseRetryAfter } from './retry-policy.js'
import { CaptureError, NotExploreError } from '../errors.js'

export interface SourceClientOptions {
  concurrency: number
  /** null: no cap. */
  rps: number | null
  /** Tries after the first one. */
  retries: number
  /** The first backoff's ceiling (retry-policy.ts). */
  retryDelayMs: number
  /** One try, the body's last byte included. */
  timeoutMs: number
  /** A body, decoded, is read up to this and no further. */
  maxBodyBytes: number
  /** Before each retry's wait. */
  onRetry?: (retry: RetryNotice) => void
}

export interface RetryNotice {
  url: string
  /** `429`, `503`, `ECONNRESET`, `timeout`… */
  reason: string
  /** 1 for the first retry. */
  retry: number
  /** Before the cap; null when the source did not say. */
  retryAfterMs: number | null
}

export interface ClientStats {
  /** Retries included. */
  requests: number
  retries: number
  retryReasons: Map<string, number>
  /** Retry-After values cut to RETRY_AFTER_CAP_MS. */
  cappedRetryAfters: number
}

/** A try that may succeed if made again. */
class Transient {
  constructor (readonly reason: string, readonly description: string, readonly retryAfterMs: number | null = null) {}
}

export class SourceClient {
  readonly stats: ClientStats = { requests: 0, retries: 0, retryReasons: new Map(), cappedRetryAfters: 0 }
  private readonly gate: RequestGate

  constructor (private readonly options: SourceClientOptions) {
    this.gate = new RequestGate(options.concurrency, options.rps)
  }

  /** A 200's JSON; else NotExploreError (not JSON, a 404), CaptureError, or the signal's reason. */
  async getJson (url: string, signal: AbortSignal): Promise<unknown> {
    const { retries, retryDelayMs } = this.options
    for (let retry = 0; ; retry++) {
      const outcome = await this.try(url, signal)
      if (!(outcome instanceof Transient)) return outcome
      if (retry >= retries) {
        const tries = retry + 1
        throw new CaptureError(
          `GET ${url}: ${outcome.description} (${tries} ${tries === 1 ? 'try' : 'tries'}; --retries ${retries})`
        )
      }
      const notice: RetryNotice = {
        url, reason: outcome.reason, retry: retry + 1, retryAfterMs: outcome.retryAfterMs
      }
      this.stats.retries++
      this.stats.retryReasons.set(outcome.reason, (this.stats.retryReasons.get(outcome.reason) ?? 0) + 1)
      if (outcome.retryAfterMs !== null) {
        if (outcome.retryAfterMs > RETRY_AFTER_CAP_MS) this.stats.cappedRetryAfters++
        // A Retry-After speaks for the whole source, not for this URL: every request waits for it.
        this.gate.pause(Math.min(outcome.retryAfterMs, RETRY_AFTER_CAP_MS))
      }
      this.options.onRetry?.(notice)
      await pauseFor(backoffDelay(retry + 1, retryDelayMs), signal)
    }
  }

  private async try (url: string, signal: AbortSignal): Promise<unknown> {
    const release = await this.gate.enter(signal)
    this.stats.requests++
    const timeout = AbortSignal.timeout(this.options.timeoutMs)
    let status: number
    let response: Response
    let text: string | null
    try {
      response = await fetch(url, {
        signal: AbortSignal.any([signal, timeout]),
        headers: { accept: 'application/json', 'user-agent': 'explore-replica capture' }
      })
      status = response.status
      // Read whatever the status: the connection goes back to the pool only once its body is consumed.
      text = await boundedText(response, this.options.maxBodyBytes)
    } catch (error) {
      if (signal.aborted) throw signal.reason
      if (timeout.aborted) {
        return new Transient('timeout', `no complete answer within ${this.options.timeoutMs / 1000} s`)
      }
      const code = networkCode(error)
      return new Transient(code, `cannot reach the source: ${describeNetworkError(error, code)}`)
    } finally {
      release()
    }
    if (text === null) {
      const mb = this.options.maxBodyBytes / 1024 / 1024
      throw new CaptureError(`GET ${url}: the answer is more than --max-body-mb allows (${mb} MiB): not read further (not retried)`)
    }
    if (isRetryableStatus(status)) {
      return new Transient(
        String(status), `${status} ${response.statusText}`.trim(), parseRetryAfter(response.headers.get('retry-after'))
      )
    }
    if (status === 404) {
      throw new NotExploreError(
        url, `404 Not Found${preview(text)} (is the language right? is --from the site's base URL?)`
      )
    }
    if (status !== 200) {
      throw new CaptureError(`GET ${url}: ${status} ${response.statusText}${preview(text)} (not retried)`)
    }
    try {
      return JSON.parse(text) as unknown
    } catch {
      const type = response.headers.get('content-type') ?? 'no content type'
      throw new NotExploreError(url, `the answer is not JSON (${type})${preview(text)}`)
    }
  }
}

/**
 * Null, the rest dropped, once more than `maxBytes` came: never buffered past it. fetch decodes a compressed body as
 * it is read, so what is counted is what it expands to. UTF-8, a byte order mark dropped, as `text()`.
 */
async function boundedText (response: Response, maxBytes: number): Promise<string | null> {
  const length = Number(response.headers.get('content-length') ?? NaN)
  if (response.headers.get('content-encoding') === null && length > maxBytes) {
    await response.body?.cancel()
    return null
  }
  const chunks: Uint8Array[] = []
  let bytes = 0
  if (response.body !== null) {
    for await (const chunk of response.body) {
      bytes += chunk.byteLength
      if (bytes > maxBytes) {
        // Leaving the loop cancels the stream: its connection is closed, not read to the end.
        return null
      }
      chunks.push(chunk)
    }
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

/** The system's error code, or undici's. */
function networkCode (error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause
  return typeof cause?.code === 'string' ? cause.code : 'network error'
}

function describeNetworkError (error: unknown, code: string): string {
  const cause = (error as { cause?: { message?: unknown } }).cause
  const message = typeof cause?.message === 'string' ? cause.message : (error as Error).message
  return message.includes(code) ? message : `${message} (${code})`
}

function preview (text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat === '') return ''
  return `: ${JSON.stringify(flat.length > 80 ? `${flat.slice(0, 80)}…` : flat)}`
}
