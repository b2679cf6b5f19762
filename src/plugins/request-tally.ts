// Requests and their durations in plain numbers, written when scraped as the counter and histogram prom-client
// would write: its labelled children cost an uncached page ~12% of its throughput (ADR 003).

interface RequestLabels {
  route: string
  method: string
  status: string
}

/** One route, method and status: kept by callers to record without a lookup. */
export interface RequestSeries {
  readonly labels: RequestLabels
  count: number
  sum: number
  /** Observations per bucket, not cumulative: `[i]` counts those ≤ bounds[i] and > bounds[i-1]; the last is +Inf. */
  readonly buckets: Float64Array
}

/** One sample of a metric's `get()` `values`, as prom-client's registry writes it. */
interface Sample {
  metricName?: string
  labels: Record<string, string | number>
  /** Labels written after `labels`, as prom-client's own histogram does with its series' labels. */
  sharedLabels?: RequestLabels
  value: number
}

/** What prom-client's registry reads from a metric, duck-typed like its own classes. */
interface CollectedMetric {
  name: string
  help: string
  type: 'counter' | 'histogram'
  aggregator: 'sum'
  get: () => Promise<{ name: string, help: string, type: 'counter' | 'histogram', aggregator: 'sum', values: Sample[] }>
}

export class RequestTally {
  private readonly all = new Map<string, RequestSeries>()

  /** @param bounds the histogram's upper bounds in seconds, ascending */
  constructor (private readonly bounds: readonly number[]) {}

  series (route: string, method: string, statusCode: number): RequestSeries {
    const key = `${route} ${method} ${statusCode}`
    let series = this.all.get(key)
    if (series === undefined) {
      series = {
        labels: { route, method, status: String(statusCode) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(this.bounds.length + 1)
      }
      this.all.set(key, series)
    }
    return series
  }

  record (series: RequestSeries, seconds: number): void {
    series.count++
    series.sum += seconds
    const { bounds } = this
    let i = 0
    while (i < bounds.length && seconds > (bounds[i] as number)) i++
    series.buckets[i] = (series.buckets[i] as number) + 1
  }

  counter (name: string, help: string): CollectedMetric {
    return this.metric(name, help, 'counter', () => this.observed()
      .map(s => ({ labels: { ...s.labels }, value: s.count })))
  }

  /** The duration histogram: cumulative buckets with `le`, then `_sum` and `_count`, per series. */
  histogram (name: string, help: string): CollectedMetric {
    return this.metric(name, help, 'histogram', () => {
      const values: Sample[] = []
      // Laid out as prom-client's Histogram lays out its own: `le` first, then the series' labels.
      for (const { labels, count, sum, buckets } of this.observed()) {
        let below = 0
        this.bounds.forEach((bound, i) => {
          below += buckets[i] as number
          values.push({ metricName: `${name}_bucket`, labels: { le: bound }, sharedLabels: labels, value: below })
        })
        values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, sharedLabels: labels, value: count })
        values.push({ metricName: `${name}_sum`, labels: {}, sharedLabels: labels, value: sum })
        values.push({ metricName: `${name}_count`, labels: {}, sharedLabels: labels, value: count })
      }
      return values
    })
  }

  /** Series with at least one request: one made ahead of its first request is not shown yet. */
  private observed (): RequestSeries[] {
    return [...this.all.values()].filter(series => series.count > 0)
  }

  private metric (name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]): CollectedMetric {
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() })
    }
  }
}
