// Which simulated trouble each page request gets (docs/guides/demo-server.md#trouble-on-purpose), decided once for
// both paths; http/troubled-answer.ts acts it out. Plain TypeScript: no Fastify, no socket.
import { randomInt } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import { MAX_DELAY_MS, type Config, type DelaySpec, type FaultKind } from '../config.js'
import { FAIL_STATUSES, simulatedFailure, type FailStatus } from '../errors.js'
import { Rng } from '../generate/random-source.js'
import { errorAnswer, type PageSettings, type ViewAnswer } from './page-answer.js'
import type { PageRequest } from './page-request.js'
import { steeringOf } from './steering-fields.js'

/** What one page request gets. */
export interface Trouble {
  /** Milliseconds to wait before anything is written (0: none). */
  delayMs: number
  /** The answer that replaces the page's, or null. */
  failure: ViewAnswer | null
  /** How the connection breaks, or null. */
  fault: FaultKind | null
}

type TroubleSettings =
  Pick<Config, 'delayMs' | 'failRate' | 'failStatus' | 'fault' | 'faultRate' | 'chaosSeed' | 'chaos'>

/** Whether any trouble is asked for: with none, the service is the replica it always was, byte for byte. */
export function troubleWanted (settings: TroubleSettings): boolean {
  return settings.delayMs !== null || settings.failRate > 0 || (settings.fault !== null && settings.faultRate > 0) ||
    settings.chaos
}

// A p90 about twice the median and a p99 about 3.2×, as measured latencies of web APIs spread.
const LOGNORMAL_SIGMA = 0.5

/** Draws delays of a DELAY_MS spec from its own stream: milliseconds, whole, from 0 to MAX_DELAY_MS. */
export class DelaySampler {
  constructor (private readonly spec: DelaySpec, private readonly rng: Rng) {}

  sample (): number {
    const { spec } = this
    switch (spec.kind) {
      case 'fixed': return spec.ms
      case 'uniform': return this.rng.int(spec.min, spec.max)
      case 'lognormal': {
        // Box-Muller: one standard normal from two uniforms (1 - u: never log(0)).
        const z = Math.sqrt(-2 * Math.log(1 - this.rng.float())) * Math.cos(2 * Math.PI * this.rng.float())
        return Math.min(MAX_DELAY_MS, Math.round(spec.median * Math.exp(LOGNORMAL_SIGMA * z)))
      }
    }
  }
}

/** What was injected since start, read by the metrics when scraped. */
interface TroubleCounts {
  delays: number
  /** Milliseconds of those delays, summed (whole numbers: no drift in a long sum). */
  delayMs: number
  faults: Record<FaultKind, number>
  failures: Map<number, number>
}

/** A request's own wishes: `Prefer: delay=500, status=503` (RFC 7240), one header or several. */
function preferences (header: string | string[] | undefined): { delay?: string, status?: string } {
  const wishes: { delay?: string, status?: string } = {}
  if (header === undefined) return wishes
  for (const preference of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    // A preference's own parameters (`; …`) say nothing here.
    const [name = '', value = ''] = (preference.split(';')[0] as string).split('=').map(part => part.trim())
    const key = name.toLowerCase()
    const unquoted = value.replace(/^"(.*)"$/, '$1')
    if (key === 'delay') wishes.delay = unquoted
    else if (key === 'status' || key === 'code') wishes.status = unquoted
  }
  return wishes
}

function wishedDelay (text: string | undefined): number | null {
  if (text === undefined || !/^[0-9]{1,7}$/.test(text)) return null
  const ms = Number(text)
  return ms <= MAX_DELAY_MS ? ms : null
}

/** 200 asks for no failure (a way round FAIL_RATE); another status, a failure with that status. */
function wishedStatus (text: string | undefined): FailStatus | 200 | null {
  if (text === undefined || !/^[0-9]{3}$/.test(text)) return null
  const status = Number(text)
  return status === 200 || (FAIL_STATUSES as number[]).includes(status) ? status as FailStatus | 200 : null
}

/**
 * The trouble of this service's page requests. Each kind draws from its own stream, once per request whatever it
 * asks, so a seed replays the same trouble and turning on one kind never shifts another's sequence.
 */
export class SimulatedTrouble {
  readonly seed: number
  readonly counts: TroubleCounts = {
    delays: 0, delayMs: 0, faults: { reset: 0, truncate: 0, dribble: 0 }, failures: new Map()
  }

  private readonly delays: DelaySampler | null
  private readonly failures: Rng
  private readonly faults: Rng
  /** Waits under way: run at once by `hurry()`. */
  private readonly waiting = new Set<() => void>()
  private closing = false

  constructor (readonly settings: TroubleSettings & PageSettings) {
    this.seed = settings.chaosSeed ?? randomInt(0x1_0000_0000)
    this.delays = settings.delayMs === null ? null : new DelaySampler(settings.delayMs, new Rng(this.seed, 'delay'))
    this.failures = new Rng(this.seed, 'failure')
    this.faults = new Rng(this.seed, 'fault')
  }

  /** The trouble a page request gets (`sent`: its target as sent), or null for none. Once per request, in order. */
  draw (request: PageRequest, sent: string): Trouble | null {
    const { settings } = this
    let delayMs = this.delays?.sample() ?? 0
    let failStatus: FailStatus | null = settings.failRate > 0 && this.failures.float() < settings.failRate
      ? settings.failStatus
      : null
    const fault = settings.fault !== null && settings.faultRate > 0 && this.faults.float() < settings.faultRate
      ? settings.fault
      : null
    if (settings.chaos) {
      // The query's field wins over the header's preference: it is the more deliberate of the two.
      const steering = steeringOf(sent)
      const wishes = preferences(request.headers.prefer)
      const delay = wishedDelay(steering.__delay ?? wishes.delay)
      if (delay !== null) delayMs = delay
      const status = wishedStatus(steering.__status ?? steering.__code ?? wishes.status)
      if (status !== null) failStatus = status === 200 ? null : status
    }
    if (this.closing) delayMs = 0
    if (delayMs === 0 && failStatus === null && fault === null) return null
    return {
      delayMs,
      failure: failStatus === null ? null : errorAnswer(simulatedFailure(failStatus), request, settings),
      fault
    }
  }

  /**
   * Runs `then` after `ms`, on a timer: thousands of waiting requests cost timers, never a thread. Nothing
   * runs if `until` (the answer's 'close') comes first: the client went away.
   */
  wait (ms: number, until: EventEmitter, then: () => void): void {
    if (this.closing) {
      then()
      return
    }
    const wake = (): void => {
      clearTimeout(timer)
      this.waiting.delete(wake)
      until.off('close', cancel)
      then()
    }
    const cancel = (): void => {
      clearTimeout(timer)
      this.waiting.delete(wake)
    }
    const timer = setTimeout(wake, ms)
    this.waiting.add(wake)
    until.once('close', cancel)
  }

  /** From closing on, every wait ends now and none begins: shutdown waits for no simulated delay. */
  hurry (): void {
    this.closing = true
    for (const wake of [...this.waiting]) wake()
  }

  /** A delay about to be served, counted. */
  countDelay (ms: number): void {
    this.counts.delays++
    this.counts.delayMs += ms
  }

  countFault (kind: FaultKind): void {
    this.counts.faults[kind]++
  }

  countFailure (status: number): void {
    this.counts.failures.set(status, (this.counts.failures.get(status) ?? 0) + 1)
  }
}
