// The serving threads' request counts for the control's scrape (ADR 029): each listening thread is asked for its
// own; one slow to answer gives its last, and one that ended leaves its counters, so that no sum goes down.
import { AggregatorRegistry } from 'prom-client'
import type { MetricsJson } from './messages.js'
import { Requests } from './requests-by-id.js'
import { send, type Slot } from './thread-slot.js'

/** How long a scrape waits for a thread's counts. */
const METRICS_TIMEOUT_MS = 2_000

export class ThreadMetrics {
  private readonly asked = new Requests<MetricsJson>()
  /** Each thread's counts at the last scrape: what a slow thread answers, and what a dead one leaves behind. */
  private readonly last = new Map<Slot, MetricsJson>()
  /** The counters of the threads that ended, summed into one: gauges (a lag) say nothing once a thread is gone. */
  private departed: Promise<MetricsJson> = Promise.resolve([])

  constructor (private readonly slots: readonly Slot[]) {}

  /**
   * Every thread's counts, for the control's scrape to sum: a thread slow to answer gives its last, and threads
   * that ended their counts at their last scrape, so that no counter of the sum goes down (Prometheus would read
   * a reset).
   */
  async collect (): Promise<MetricsJson[]> {
    const live = await Promise.all(this.slots.filter(slot => slot.listening).map(async slot => {
      const metrics = await this.asked.ask(id => { send(slot, { type: 'metrics', id }) }, METRICS_TIMEOUT_MS)
      if (metrics === undefined) return this.last.get(slot) ?? []
      this.last.set(slot, metrics)
      return metrics
    }))
    return [...live, await this.departed]
  }

  /** A thread's counts, answering the scrape that asked under `id`. */
  answer (id: number, metrics: MetricsJson): void {
    this.asked.answer(id, metrics)
  }

  /** The slot's thread ended: its counters at the last scrape join the departed's. */
  keep (slot: Slot): void {
    const last = this.last.get(slot)?.filter(metric =>
      String(metric.type) === 'counter' || String(metric.type) === 'histogram')
    this.last.delete(slot)
    if (last === undefined || last.length === 0) return
    this.departed = this.departed.then(async departed =>
      await AggregatorRegistry.aggregate([departed, last]).getMetricsAsJSON() as MetricsJson)
  }
}
