// Loaded into the service (`node --expose-gc --import ./bench/.data/settled-probe.mjs`, written by
// `npx tsx bench/plain-script.ts bench/experiments/settled-probe.ts`): on SIGWINCH, which the service
// neither handles nor dies of, five full collections of the main thread, then one line on stderr,
// `SETTLED {"rssBytes":…,"arrayBuffersBytes":…}`: the settled memory at that moment, as often as asked
// (the bench's forceGc opens the inspector and can collect once per process). Node modules only: run by
// plain node, in every thread, and it acts in the main thread alone.
import { readFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'

const gc = (globalThis as { gc?: () => void }).gc
if (isMainThread && gc !== undefined) {
  process.on('SIGWINCH', () => {
    for (let i = 0; i < 4; i++) gc()
    // Shared chunks a collection let go are unmapped when their finalizers run, after the collection.
    setTimeout(() => {
      gc()
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN)
      process.stderr.write(`SETTLED ${JSON.stringify({ rssBytes: rssKb * 1024, arrayBuffersBytes: process.memoryUsage().arrayBuffers })}\n`)
    }, 1000)
  })
}
