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
  /** Settles once the last request to ask for a start has one (or was aborted): see `clearance`. */
  private lastInLine: Promise<void> = Promise.resolve()

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

  /**
   * Starts are given in the order they are asked for, one request at a time: a timer fires on the event
   * loop's millisecond clock, so a request can wake a fraction of a millisecond before its start and sleep
   * again, while one behind it, woken a moment later, would take that start (seen as 1, 3, 2).
   */
  private async clearance (signal: AbortSignal): Promise<void> {
    const ahead = this.lastInLine
    let leave = (): void => {}
    const mine = new Promise<void>(resolve => { leave = resolve })
    // The next in line goes once this one and every one before it have gone, aborted or not.
    this.lastInLine = ahead.then(async () => await mine)
    try {
      await unlessAborted(ahead, signal)
      await this.start(signal)
    } finally {
      leave()
    }
  }

  /** Waits out the pause and the rate cap, and takes the next start. */
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

/** Waits for `promise`; an abort rejects at once, with the signal's reason. */
async function unlessAborted (promise: Promise<void>, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted()
  let onAbort = (): void => {}
  const aborted = new Promise<never>((resolve, reject) => { onAbort = () => reject(signal.reason) })
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    await Promise.race([promise, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
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
