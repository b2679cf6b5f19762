// The ceiling: a bare Fastify server that first fetches the service's own answers to the hot paths, then
// replays those bytes from memory (hot) or one fixed page of the mean answer size (cold). What the machine,
// Node and Fastify allow when a request costs nothing but a lookup. Started by bench/run.ts over IPC.
import Fastify from 'fastify'
import { replayedHeaders } from './http-headers.js'

export interface CeilingJob {
  /** The running service, e.g. http://127.0.0.1:40123, to fetch the hot answers from. */
  source: string
  hotPaths: string[]
  /** The page every cold request gets, and the headers the service sent with it. */
  coldBody: string
  coldHeaders: Record<string, string>
  /** Sent with each fetch, as the load generator sends them. */
  requestHeaders: Record<string, string>
  port: number
}

export type CeilingMessage =
  | { type: 'ready', port: number, distinctHotPaths: number, meanHotBytes: number, failureCount: number, failures: Array<{ path: string, status: number }> }
  | { type: 'mode', mode: 'hot' | 'cold' }
  | { type: 'error', message: string }

const FETCH_CONCURRENCY = 8

interface Answer { body: Buffer, headers: Record<string, string> }

async function fetchAnswers (job: CeilingJob): Promise<{ answers: Map<string, Answer>, failures: Array<{ path: string, status: number }> }> {
  const answers = new Map<string, Answer>()
  const failures: Array<{ path: string, status: number }> = []
  const unique = [...new Set(job.hotPaths)]
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < unique.length) {
      const path = unique[next++] ?? '/'
      const response = await fetch(`${job.source}${path}`, { headers: job.requestHeaders })
      const body = Buffer.from(await response.arrayBuffer())
      if (response.status === 200) answers.set(path, { body, headers: replayedHeaders(response.headers) })
      else failures.push({ path, status: response.status })
    }
  }
  await Promise.all(Array.from({ length: FETCH_CONCURRENCY }, worker))
  return { answers, failures }
}

async function serve (job: CeilingJob): Promise<void> {
  const { answers, failures } = await fetchAnswers(job)
  const cold: Answer = { body: Buffer.from(job.coldBody, 'utf8'), headers: job.coldHeaders }
  let mode: 'hot' | 'cold' = 'hot'

  const app = Fastify({ logger: false })
  // The service's route shape, so both pay the same routing and query-string parsing.
  app.get('/:lang/api/internal/explore/', (request, reply) => {
    // The lookup runs in both modes, so the two cost the same; a hot miss is a bug in the bench: 404.
    const hot = answers.get(request.url)
    if (mode === 'hot' && hot === undefined) reply.code(404).type('application/json').send('{"detail":"Not found."}')
    else {
      const answer = mode === 'hot' && hot !== undefined ? hot : cold
      reply.headers(answer.headers).send(answer.body)
    }
  })
  await app.listen({ port: job.port, host: '127.0.0.1' })

  process.on('message', (message: CeilingMessage) => {
    if (message.type === 'mode') {
      mode = message.mode
      process.send?.(message)
    }
  })
  // Never outlive the benchmark, even if it dies without stopping us.
  process.once('disconnect', () => process.exit(0))
  // Weighted by how often each path is requested, as the load will be.
  const hotBytes = job.hotPaths.reduce((n, path) => n + (answers.get(path)?.body.length ?? 0), 0)
  process.send?.({
    type: 'ready',
    port: job.port,
    distinctHotPaths: answers.size,
    meanHotBytes: job.hotPaths.length > 0 ? hotBytes / job.hotPaths.length : 0,
    failureCount: failures.length,
    failures: failures.slice(0, 20)
  } satisfies CeilingMessage)
}

if (process.send === undefined) {
  console.error('bench/ceiling-server.ts is started by bench/run.ts (it takes its job over IPC)')
  process.exit(1)
}
process.once('message', (job: CeilingJob) => {
  serve(job).catch((error: unknown) => {
    process.send?.({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) } satisfies CeilingMessage)
    process.exit(1)
  })
})
