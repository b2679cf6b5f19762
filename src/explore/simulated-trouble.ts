// Which simulated trouble a page request gets (docs/guides/demo-server.md); troubled-answer.ts acts it out.
import { randomInt } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import { MAX_DELAY_MS, type ChaosReplay, type Config, type DelaySpec, type FaultKind } from '../config.js'
import { FAIL_STATUSES, simulatedFailure, type FailStatus } from '../errors.js'
import { avalanche, Rng } from '../generate/random-source.js'
import { errorAnswer, type PageSettings, type ViewAnswer } from './page-answer.js'
import type { PageRequest } from './page-request.js'
import { fold, ReplayCounts, RequestDigest } from './replay-counts.js'
import { trimmedFrom, trimmedTo } from './header-text.js'
import { steeringOf } from './steering-fields.js'

/** Why a request got its delay or failure: the option's draw, or what the request asked for under CHAOS. */
export type TroubleCause = 'DELAY_MS' | 'FAIL_RATE' | 'Prefer' | '__delay' | '__status' | '__code'

export interface Trouble {
  delayMs: number
  delayBy: TroubleCause | null
  /** Replaces the page's answer. */
  failure: ViewAnswer | null
  failureBy: TroubleCause | null
  fault: FaultKind | null
}

type TroubleSettings = Pick<
  Config, 'delayMs' | 'failRate' | 'failStatus' | 'fault' | 'faultRate' | 'chaosSeed' | 'chaos' | 'chaosReplay'
>

/** With none, the service is the replica it always was, byte for byte. */
export function troubleWanted (settings: TroubleSettings): boolean {
  return settings.delayMs !== null || settings.failRate > 0 || (settings.fault !== null && settings.faultRate > 0) ||
    settings.chaos
}

// p90 ≈ 2× the median, p99 ≈ 3.2×, as measured web API latencies spread.
const LOGNORMAL_SIGMA = 0.5

/** DELAY_MS draws, in whole milliseconds up to MAX_DELAY_MS. */
export class DelaySampler {
  constructor (private readonly spec: DelaySpec, private readonly rng: Rng) {}

  sample (): number {
    const { spec } = this
    switch (spec.kind) {
      case 'fixed': return spec.ms
      case 'uniform': return this.rng.int(spec.min, spec.max)
      case 'lognormal': {
        // Box-Muller (1 - u: never log(0)).
        const z = Math.sqrt(-2 * Math.log(1 - this.rng.float())) * Math.cos(2 * Math.PI * this.rng.float())
        return Math.min(MAX_DELAY_MS, Math.round(spec.median * Math.exp(LOGNORMAL_SIGMA * z)))
      }
    }
  }
}

interface TroubleCounts {
  delays: number
  /** Whole milliseconds: no drift in a long sum. */
  delayMs: number
  faults: Record<FaultKind, number>
  failures: Map<number, number>
}

function headerText (header: string | string[] | undefined): string {
  return header === undefined ? '' : Array.isArray(header) ? header.join(',') : header
}

/**
 * `Prefer: delay=500, status=503` (RFC 7240), one header or several: each preference's name and value before any
 * `;`, the header walked once (ADR 037).
 */
export function preferences (header: string | string[] | undefined): { delay?: string, status?: string } {
  const wishes: { delay?: string, status?: string } = {}
  if (header === undefined) return wishes
  const text = headerText(header)
  // Per preference: where its parameters start, its first `=` (the name's end) and its second (the value's).
  let from = 0
  let semicolon = -1
  let eq = -1
  let secondEq = -1
  for (let i = 0; i <= text.length; i++) {
    const code = i === text.length ? 0x2c : text.charCodeAt(i)
    if (code === 0x2c) {
      const end = semicolon < 0 ? i : semicolon
      const nameFrom = trimmedFrom(text, from, eq < 0 ? end : eq)
      const nameTo = trimmedTo(text, nameFrom, eq < 0 ? end : eq)
      // No name longer than six characters lowers to one of these.
      const key = nameTo - nameFrom >= 4 && nameTo - nameFrom <= 6 ? text.slice(nameFrom, nameTo).toLowerCase() : ''
      if (key === 'delay' || key === 'status' || key === 'code') {
        const value = eq < 0 ? '' : text.slice(eq + 1, secondEq < 0 ? end : secondEq).trim()
        const unquoted = value.replace(/^"(.*)"$/, '$1')
        if (key === 'delay') wishes.delay = unquoted
        else wishes.status = unquoted
      }
      from = i + 1
      semicolon = eq = secondEq = -1
    } else if (semicolon < 0) {
      if (code === 0x3b) semicolon = i
      else if (code === 0x3d && eq < 0) eq = i
      else if (code === 0x3d && secondEq < 0) secondEq = i
    }
  }
  return wishes
}

function wishedDelay (text: string | undefined): number | null {
  if (text === undefined || !/^[0-9]{1,7}$/.test(text)) return null
  const ms = Number(text)
  return ms <= MAX_DELAY_MS ? ms : null
}

/** 200 asks for no failure (a way round FAIL_RATE). */
function wishedStatus (text: string | undefined): FailStatus | 200 | null {
  if (text === undefined || !/^[0-9]{3}$/.test(text)) return null
  const status = Number(text)
  return status === 200 || (FAIL_STATUSES as number[]).includes(status) ? status as FailStatus | 200 : null
}

/**
 * Each kind draws from its own stream, so kinds never shift each other. By request (ADR 041): each stream restarted
 * per request from the seed, the request's digest and how often it was asked for before; by order: one stream per
 * kind drawn once a request, in the order they come.
 */
export class SimulatedTrouble {
  readonly seed: number
  readonly replay: ChaosReplay
  readonly counts: TroubleCounts = {
    delays: 0, delayMs: 0, faults: { reset: 0, truncate: 0, dribble: 0 }, failures: new Map()
  }

  /** The request's askings before it (by request), or the draws before it (by order), of the last `draw`. */
  lastDraw = 0
  /** The table the serving threads share (by request). */
  readonly askings: ReplayCounts
  private readonly digest = new RequestDigest()
  private drawn = 0
  private delayRng!: Rng
  private delays!: DelaySampler | null
  private failures!: Rng
  private faults!: Rng
  private readonly waiting = new Set<() => void>()
  private closing = false

  /** `askings`: the control's table, in a serving thread. */
  constructor (readonly settings: TroubleSettings & PageSettings, askings?: SharedArrayBuffer) {
    this.seed = settings.chaosSeed ?? randomInt(0x1_0000_0000)
    this.replay = settings.chaosReplay
    this.askings = new ReplayCounts(askings)
    this.startStreams()
  }

  /** As at start: the order's streams from their first draw, every request's askings (every thread's) from zero. */
  restart (): void {
    this.startStreams()
    this.askings.clear()
  }

  private startStreams (): void {
    this.delayRng = new Rng(this.seed, 'delay')
    this.delays = this.settings.delayMs === null ? null : new DelaySampler(this.settings.delayMs, this.delayRng)
    this.failures = new Rng(this.seed, 'failure')
    this.faults = new Rng(this.seed, 'fault')
    this.drawn = 0
  }

  /** `sent`: the target as sent. Once per request. */
  draw (request: PageRequest, sent: string, method = 'GET'): Trouble | null {
    const { settings } = this
    this.lastDraw = this.replay === 'order' ? this.drawn++ : this.restartFor(request, sent, method)
    let delayMs = this.delays?.sample() ?? 0
    let delayBy: TroubleCause | null = delayMs > 0 ? 'DELAY_MS' : null
    let failStatus: FailStatus | null = settings.failRate > 0 && this.failures.float() < settings.failRate
      ? settings.failStatus
      : null
    let failureBy: TroubleCause | null = failStatus === null ? null : 'FAIL_RATE'
    const fault = settings.fault !== null && settings.faultRate > 0 && this.faults.float() < settings.faultRate
      ? settings.fault
      : null
    if (settings.chaos) {
      // The query's field wins over the header: it is more deliberate.
      const steering = steeringOf(sent)
      const wishes = preferences(request.headers.prefer)
      const delay = wishedDelay(steering.__delay ?? wishes.delay)
      if (delay !== null) {
        delayMs = delay
        delayBy = delay === 0 ? null : steering.__delay === undefined ? 'Prefer' : '__delay'
      }
      const asked = steering.__status !== undefined ? '__status' : steering.__code !== undefined ? '__code' : 'Prefer'
      const status = wishedStatus(steering.__status ?? steering.__code ?? wishes.status)
      if (status !== null) {
        failStatus = status === 200 ? null : status
        failureBy = status === 200 ? null : asked
      }
    }
    if (this.closing) {
      delayMs = 0
      delayBy = null
    }
    if (delayMs === 0 && failStatus === null && fault === null) return null
    return {
      delayMs,
      delayBy,
      failure: failStatus === null ? null : errorAnswer(simulatedFailure(failStatus), request, settings),
      failureBy,
      fault
    }
  }

  /** The streams restarted for this request's next asking; how often it was asked for before. */
  private restartFor (request: PageRequest, sent: string, method: string): number {
    // Prefer steers only under CHAOS: without it, the header is no part of what the request is.
    this.digest.of(method, sent, this.settings.chaos ? headerText(request.headers.prefer) : '')
    const asked = this.askings.next(this.digest)
    const base = fold(fold(fold(this.seed, this.digest.tag), this.digest.spot), asked)
    this.delayRng.reseed(avalanche(fold(base, 1)))
    this.failures.reseed(avalanche(fold(base, 2)))
    this.faults.reseed(avalanche(fold(base, 3)))
    return asked
  }

  /** A timer, never a thread, per wait; nothing runs if `until` closes first (the client went away). */
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

  /** Shutdown waits for no simulated delay. */
  hurry (): void {
    this.closing = true
    for (const wake of [...this.waiting]) wake()
  }

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
