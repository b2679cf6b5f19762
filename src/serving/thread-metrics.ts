// The serving threads' request counts for the control's scrape (ADR 029).
import { AggregatorRegistry } from 'prom-client'
import type { MetricsJson } from './messages.js'
import { Requests } from './requests-by-id.js'
import { send, type Slot } from './thread-slot.js'

const METRICS_TIMEOUT_MS = 2_000

export class ThreadMetrics {
  private readonly asked = new Requests<MetricsJson>()
  private readonly last = new Map<Slot, MetricsJson>()
  /** Counters only: gauges (a lag) say nothing once a thread is gone. */
  private departed: Promise<MetricsJson> = Promise.resolve([])

  constructor (private readonly slots: readonly Slot[]) {}

  /** Slow and ended threads give their last counts, so that no sum goes down (Prometheus would read a reset). */
  async collect (): Promise<MetricsJson[]> {
    const live = await Promise.all(this.slots.filter(slot => slot.listening).map(async slot => {
      const metrics = await this.asked.ask(id => { send(slot, { type: 'metrics', id }) }, METRICS_TIMEOUT_MS)
      if (metrics === undefined) return this.last.get(slot) ?? []
      this.last.set(slot, metrics)
      return metrics
    }))
    return [...live, await this.departed]
  }

  answer (id: number, metrics: MetricsJson): void {
    this.asked.answer(id, metrics)
  }

  keep (slot: Slot): void {
    const last = this.last.get(slot)?.filter(metric =>
      String(metric.type) === 'counter' || String(metric.type) === 'histogram')
    this.last.delete(slot)
    if (last === undefined || last.length === 0) return
    this.departed = this.departed.then(async departed =>
      await AggregatorRegistry.aggregate([departed, last]).getMetricsAsJSON() as MetricsJson)
  }
}
