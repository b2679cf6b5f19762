// The memory budget of a cluster (WORKERS > 1) is the whole cluster's: each worker holds its own copy of the
// snapshot, and workers that all load at once need all their peaks at once. So a worker asks its primary
// before a load, and the primary orders the loads: one that fits beside the others now starts at once, one
// that would fit once the loads under way have ended waits for them, and one that cannot fit even then is
// refused with the cluster's numbers. A single process keeps the budget to itself (ProcessMemoryGuard).
import cluster from 'node:cluster'
import { readFileSync } from 'node:fs'
import type { Config } from '../config.js'
import { TooBigError, type MemoryShortfall } from '../errors.js'
import {
  estimatePeak, ProcessMemoryGuard, residentBytes, resolveBudget, shortfallText, watchLoad,
  type LoadWatch, type MemoryBudget, type MemoryGuard, type ParsedFormat
} from '../snapshot/memory-budget.js'
import { askPrimary, tellPrimary } from './ask-primary.js'

/** The guard this process's loads go through: its primary's in a cluster's worker, its own otherwise. */
export function memoryGuard (config: Config): MemoryGuard {
  const budget = resolveBudget(config.memoryLimitMb)
  return cluster.isWorker && process.send !== undefined
    ? new WorkerMemoryGuard(budget, config.memoryEstimateScale)
    : new ProcessMemoryGuard(budget, { scale: config.memoryEstimateScale })
}

/** The primary's answer to a worker that asks to load: how far its own memory may grow, or the refusal. */
export type LoadAnswer = { ceiling: number } | { refused: MemoryShortfall }

/** A worker's loads, each asked of the primary first. */
class WorkerMemoryGuard implements MemoryGuard {
  constructor (readonly budget: MemoryBudget, private readonly scale: number) {}

  async admit (file: string, bytes: number, format: ParsedFormat): Promise<LoadWatch> {
    const neededBytes = estimatePeak(bytes, format, this.scale)
    // Waits for its turn as long as the loads before it take.
    const { request, answer: said } = await askPrimary('memory', { neededBytes })
    const answer = said?.answer
    if (answer === undefined) throw new Error('the primary did not answer')
    if ('refused' in answer) throw new TooBigError(file, shortfallText(answer.refused), answer.refused)
    return watchLoad(file, neededBytes, answer.ceiling, this.budget.bytes, residentBytes, () => { tellPrimary({ explore: 'memory-done', request }) })
  }
}

/** A process's resident memory by its pid, from /proc (Linux); 0 when it cannot be read (it has exited). */
function residentBytesOf (pid: number): number {
  try {
    const kB = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kB === undefined ? 0 : Number(kB) * 1024
  } catch {
    return 0
  }
}

interface Asked {
  key: string
  pid: number
  neededBytes: number
  answer: (answer: LoadAnswer) => void
}

interface Running {
  pid: number
  /** The worker's memory when its load started: it may grow to this plus its estimate. */
  base: number
  neededBytes: number
}

/**
 * The primary's side: loads granted in the order they were asked. What the cluster holds is every process's
 * resident memory now (the primary's, every worker's), plus what each load under way may still grow by.
 */
export class LoadOrder {
  private readonly running = new Map<string, Running>()
  private readonly queue: Asked[] = []

  /**
   * @param pids the workers' pids now
   * @param rssOf a process's resident memory (tests give their own); the primary's own is `ownRss`
   */
  constructor (
    readonly budget: MemoryBudget,
    private readonly pids: () => number[],
    private readonly rssOf: (pid: number) => number = residentBytesOf,
    private readonly ownRss: () => number = residentBytes
  ) {}

  /** Worker `pid` asks to load with a peak of `neededBytes`; `key` names the request until it is done. */
  ask (key: string, pid: number, neededBytes: number): Promise<LoadAnswer> {
    return new Promise(resolve => {
      this.queue.push({ key, pid, neededBytes, answer: resolve })
      this.grant()
    })
  }

  /** A load granted under `key` is over. */
  done (key: string): void {
    if (this.running.delete(key)) this.grant()
  }

  /** Worker `pid` exited: its loads are over, and its questions need no answer. */
  forget (pid: number): void {
    for (const [key, load] of this.running) if (load.pid === pid) this.running.delete(key)
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]?.pid === pid) this.queue.splice(i, 1)
    this.grant()
  }

  /** Grants the oldest questions while they fit; the first that does not waits for a load to end, or is refused when none is under way. */
  private grant (): void {
    while (this.queue.length > 0) {
      const asked = this.queue[0] as Asked
      const own = this.rssOf(asked.pid)
      const others = this.held() - own
      const freeBytes = this.budget.bytes - others - own
      if (asked.neededBytes <= freeBytes) {
        this.queue.shift()
        this.running.set(asked.key, { pid: asked.pid, base: own, neededBytes: asked.neededBytes })
        asked.answer({ ceiling: this.budget.bytes - others })
        continue
      }
      // Loads under way end, and what they free (a replaced snapshot) may let this one in: it waits for them.
      if (this.running.size > 0) return
      this.queue.shift()
      asked.answer({ refused: { neededBytes: asked.neededBytes, freeBytes, budgetBytes: this.budget.bytes } })
    }
  }

  /** The cluster's memory now, with what the loads under way may still grow by. */
  private held (): number {
    let held = this.ownRss()
    for (const pid of this.pids()) held += this.rssOf(pid)
    for (const load of this.running.values()) held += Math.max(0, load.base + load.neededBytes - this.rssOf(load.pid))
    return held
  }
}
