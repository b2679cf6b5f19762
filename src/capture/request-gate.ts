// Decides when the next request to the source may leave: at most N in flight, at most R started per
// second, and none while the source has asked for a pause (Retry-After). Every wait can be aborted.
import { setTimeout as sleep } from 'node:timers/promises'

export class RequestGate {
  private inFlight = 0
  private readonly queue: Array<() => void> = []
  /** performance.now() before which no request may start: the rate cap's next free start. */
  private nextStart = 0
  /** performance.now() before which no request may start: the source's last Retry-After. */
  private resumeAt = 0
  private readonly interval: number

  constructor (private readonly concurrency: number, rps: number | null) {
    this.interval = rps === null ? 0 : 1000 / rps
  }

  /** Waits until a request may start; the caller must call the returned release when it has its answer. */
  async enter (signal: AbortSignal): Promise<() => void> {
    await this.slot(signal)
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      const next = this.queue.shift()
      // A waiting request takes the slot over: the count stays as it is.
      if (next === undefined) this.inFlight--
      else next()
    }
    try {
      await this.clearance(signal)
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

  private async slot (signal: AbortSignal): Promise<void> {
    signal.throwIfAborted()
    if (this.inFlight < this.concurrency) {
      this.inFlight++
      return
    }
    await new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        const at = this.queue.indexOf(wake)
        if (at >= 0) this.queue.splice(at, 1)
        reject(signal.reason)
      }
      this.queue.push(wake)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  private async clearance (signal: AbortSignal): Promise<void> {
    // Both times can move while this request sleeps (another 429, another request taking the next
    // start): look again after each wait.
    for (;;) {
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

/** Sleeps `ms`; an abort rejects with the signal's own reason, as every other wait of the capture does. */
export async function pauseFor (ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal })
  } catch (error) {
    if (signal.aborted) throw signal.reason
    throw error
  }
}
