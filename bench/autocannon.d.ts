// Types for the parts of autocannon 8's programmatic API the benchmark uses (the package ships none).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
    }

    /** One connection. Only what bench/load-test.ts touches is typed. */
    interface Client extends EventEmitter {
      setRequests (requests: Request[]): void
      pipelinedRequests: { addBody: (data: Buffer) => void }
    }

    interface Options {
      url: string
      connections?: number
      duration?: number
      /** Seconds before a request counts as timed out. */
      timeout?: number
      pipelining?: number
      /** Requests per second over all connections. */
      overallRate?: number
      headers?: Record<string, string>
      requests?: Request[]
      setupClient?: (client: Client) => void
    }

    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      p50: number
      p90: number
      p97_5: number
      p99: number
      p99_9: number
    }

    interface Result {
      /** Seconds. */
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      mismatches: number
      resets: number
      '2xx': number
      statusCodeStats: Record<string, { count: number }>
      /** Milliseconds. */
      latency: Histogram & { totalCount: number }
      /** Per-second samples; `total` is every completed request. */
      requests: Histogram & { total: number, sent: number }
      /** Bytes per second samples; `total` is every byte received. */
      throughput: Histogram & { total: number }
    }
  }

  function autocannon (options: autocannon.Options): Promise<autocannon.Result>
  export = autocannon
}
