// Loaded into the service (`node --expose-gc --import ./bench/.data/settled-probe.mjs`, written by
// `npx tsx bench/plain-script.ts bench/settled-probe.ts`): on SIGWINCH, which the service
// neither handles nor dies of, five full collections of the main thread, then one line on stderr,
// `SETTLED {"rssBytes":…,"arrayBuffersBytes":…,"heapUsedBytes":…,"heapTotalBytes":…,"v8MallocedBytes":…,"v8PeakMallocedBytes":…,"regions":{…}}`: the settled memory at that moment, as often as asked
// (the bench's forceGc opens the inspector and can collect once per process). Node modules only: run by
// plain node, in every thread, and it acts in the main thread alone. SPACES=1 adds a line `SPACES {…}` of V8's
// spaces (each: committed, resident, used bytes); SMAPS_OUT=PREFIX copies /proc/self/smaps to PREFIX-n at the
// n-th reading, to diff mapping by mapping.
import { readFileSync, writeFileSync } from 'node:fs'
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'
import { isMainThread } from 'node:worker_threads'

/**
 * Resident bytes by kind of mapping (/proc/self/smaps): `brk` (malloc's main heap), `shared` (shared
 * anonymous memory: the items' chunks, item-memory.ts), `anonymous` (V8's pages, mmap'd malloc blocks and
 * threads' arenas), `files` (code and mapped files). Which of them a change grows says what grew.
 */
function regions (): Record<string, number> {
  const sums: Record<string, number> = { brk: 0, shared: 0, anonymous: 0, files: 0 }
  let name = ''
  let rss = 0
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head !== null) {
      name = head[1] ?? ''
      continue
    }
    if (line.startsWith('Rss:')) rss = Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024
    if (line.startsWith('VmFlags:')) {
      const kind = name === '[heap]' ? 'brk' : / sh /.test(`${line} `) ? 'shared' : name === '' ? 'anonymous' : name.startsWith('/') ? 'files' : 'anonymous'
      sums[kind] = (sums[kind] ?? 0) + rss
    }
  }
  return sums
}

let copies = 0
const gc = (globalThis as { gc?: () => void }).gc
if (isMainThread && gc !== undefined) {
  process.on('SIGWINCH', () => {
    for (let i = 0; i < 4; i++) gc()
    // Shared chunks a collection let go are unmapped when their finalizers run, after the collection.
    setTimeout(() => {
      gc()
      const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN)
      const { arrayBuffers, heapUsed, heapTotal } = process.memoryUsage()
      // V8's own malloc (the compilers' zones, among others): outside its heap and the array buffers.
      const { malloced_memory: v8MallocedBytes, peak_malloced_memory: v8PeakMallocedBytes } = getHeapStatistics()
      if (process.env.SPACES === '1') process.stderr.write(`SPACES ${JSON.stringify(Object.fromEntries(getHeapSpaceStatistics().map(space => [space.space_name, [space.space_size, space.physical_space_size, space.space_used_size]])))}\n`)
      if (process.env.SMAPS_OUT !== undefined) writeFileSync(`${process.env.SMAPS_OUT}-${++copies}`, readFileSync('/proc/self/smaps'))
      process.stderr.write(`SETTLED ${JSON.stringify({ rssBytes: rssKb * 1024, arrayBuffersBytes: arrayBuffers, heapUsedBytes: heapUsed, heapTotalBytes: heapTotal, v8MallocedBytes, v8PeakMallocedBytes, regions: regions() })}\n`)
    }, 1000)
  })
}
