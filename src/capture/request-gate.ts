// Decides when the next request to the source may leave: at most N in flight, at most R started per
// second, and none while the source has asked for a pause (Retry-After). Every wait can be aborted.
import { setTimeout as sleep } from 'node:timers/promises'

export class RequestGate {
  private readonly inFlight: Places
  /** One at a time waits out pause and rate, in order: a timer woken early would lose its start (seen: 1, 3, 2). */
  private readonly starting = new Places(1)
  /** performance.now() of the rate cap's next free start. */
  private nextStart = 0
  /** performance.now() when the source's last Retry-After ends. */
  private resumeAt = 0
  private readonly interval: number

  constructor (concurrency: number, rps: number | null) {
    this.inFlight = new Places(concurrency)
    this.interval = rps === null ? 0 : 1000 / rps
  }

  /** Resolves with the release to call once the answer is in. */
  async enter (signal: AbortSignal): Promise<() => void> {
    const release = await this.inFlight.take(signal)
    try {
      const leave = await this.starting.take(signal)
      try {
        await this.start(signal)
      } finally {
        leave()
      }
    } catch (error) {
      release()
      throw error
    }
    return release
  }

  /** The source asked for a pause: no request starts for `ms` from now (a longer pause already set stays). */
  pause (ms: number): void {
    this.resumeAt = Math.max(this.resumeAt, performance.now() + ms)
  }

  private async start (signal: AbortSignal): Promise<void> {
    // Both times can move while this request sleeps (another 429): look again after each wait.
    for (;;) {
      // An abort can land between two waits (the capture aborts from a rejection handler): no start for it.
      signal.throwIfAborted()
      const now = performance.now()
      const wait = Math.max(this.resumeAt, this.nextStart) - now
      if (wait <= 0) {
        this.nextStart = Math.max(now, this.nextStart) + this.interval
        return
      }
      await pauseFor(Math.ceil(wait), signal)
    }
  }
}

/** At most `count` holders; the others wait in line, first come first served, each wait abortable. */
class Places {
  private held = 0
  private readonly line: Array<() => void> = []

  constructor (private readonly count: number) {}

  /** Resolves with the function that gives the place back (once); an abort leaves the line at once. */
  async take (signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted()
    if (this.held < this.count) {
      this.held++
    } else {
      await new Promise<void>((resolve, reject) => {
        const wake = (): void => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        }
        const onAbort = (): void => {
          const at = this.line.indexOf(wake)
          if (at >= 0) this.line.splice(at, 1)
          reject(signal.reason)
        }
        this.line.push(wake)
        signal.addEventListener('abort', onAbort, { once: true })
      })
    }
    let given = false
    return () => {
      if (given) return
      given = true
      const next = this.line.shift()
      // The first in line takes the place over: the count stays as it is.
      if (next === undefined) this.held--
      else next()
    }
  }
}

/** Sleeps `ms`; an abort rejects with the signal's own reason, as every other wait of the capture does. */
export async function pauseFor (ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal })
  } catch (error) {
    if (signal.aborted) throw signal.reason
    throw error
  }
}
