// The memory budget's parts: where the budget comes from (cgroup files in a directory of the test's own),
// the estimate of a load's peak, the refusal's numbers, and the watch during a load.
import t from 'tap'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { TooBigError } from '../../src/errors.js'
import { journalReserve } from '../../src/http/request-journal.js'
import { DOORKEEPER_MAX_BYTES, servingCachesBytes } from '../../src/explore/page-cache.js'
import { THREADS_FROM_BYTES } from '../../src/snapshot/load/parse-pool.js'
import {
  cgroupLimit, estimatePeak, memoryGuard, PEAK_ESTIMATE, ProcessMemoryGuard, resolveBudget, shortfallText, watchLoad
} from '../../src/snapshot/memory-budget.js'
import { ItemMemory, memoryGoing } from '../../src/snapshot/model/item-memory.js'
import { unionCacheBytes } from '../../src/snapshot/model/union-cache.js'
import { tempDir } from '../helpers.js'

const MiB = 1024 * 1024
const V1_UNLIMITED = '9223372036854771712'

/** A root with /proc/self/cgroup, /proc/self/mountinfo and the cgroup files given (path → content). */
async function fakeRoot (t: Parameters<typeof tempDir>[0], cgroup: string, mountinfo: string, files: Record<string, string>): Promise<string> {
  const root = await tempDir(t)
  await mkdir(join(root, 'proc/self'), { recursive: true })
  await writeFile(join(root, 'proc/self/cgroup'), cgroup)
  await writeFile(join(root, 'proc/self/mountinfo'), mountinfo)
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), content)
  }
  return root
}

// What this machine's kernel writes (cgroup v1, with a v2 hierarchy that has no memory controller).
const V1_CGROUP = '9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n0::/\n'
const V1_MOUNTS = [
  '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw'
].join('\n')

t.test('MEMORY_LIMIT_MB wins over any cgroup', async t => {
  const root = await fakeRoot(t, V1_CGROUP, V1_MOUNTS, { 'sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': String(300 * MiB) })
  t.same(resolveBudget(1200, { root, machineBytes: 8192 * MiB }), { bytes: 1200 * MiB, source: 'MEMORY_LIMIT_MB' })
  t.same(resolveBudget(null, { root, machineBytes: 8192 * MiB }), { bytes: 300 * MiB, source: 'cgroup v1' })
})

t.test('cgroup v1: the lowest limit from the process\'s cgroup up to the hierarchy\'s root', async t => {
  const root = await fakeRoot(t, V1_CGROUP, V1_MOUNTS, {
    'sys/fs/cgroup/memory/memory.limit_in_bytes': V1_UNLIMITED,
    'sys/fs/cgroup/memory/process_api/memory.limit_in_bytes': String(500 * MiB),
    'sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': V1_UNLIMITED
  })
  t.same(cgroupLimit(root), { bytes: 500 * MiB, source: 'cgroup v1' }, 'a parent\'s limit binds its children')
})

t.test('cgroup v1 without a limit: the machine\'s memory', async t => {
  const root = await fakeRoot(t, V1_CGROUP, V1_MOUNTS, { 'sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': V1_UNLIMITED })
  t.same(resolveBudget(null, { root, machineBytes: 8192 * MiB }), { bytes: 8192 * MiB, source: 'machine' })
})

t.test('cgroup v2: memory.max of the process\'s cgroup, `max` meaning none', async t => {
  const mounts = '25 20 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate'
  const root = await fakeRoot(t, '0::/system.slice/explore.service\n', mounts, {
    'sys/fs/cgroup/system.slice/memory.max': 'max\n',
    'sys/fs/cgroup/system.slice/explore.service/memory.max': `${1536 * MiB}\n`
  })
  t.same(resolveBudget(null, { root, machineBytes: 8192 * MiB }), { bytes: 1536 * MiB, source: 'cgroup v2' })
  const unlimited = await fakeRoot(t, '0::/system.slice/explore.service\n', mounts, { 'sys/fs/cgroup/system.slice/explore.service/memory.max': 'max\n' })
  t.equal(cgroupLimit(unlimited), null)
})

t.test('a container\'s cgroup namespace: the path is the mount\'s own root', async t => {
  const root = await fakeRoot(t, '0::/\n', '600 500 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw', { 'sys/fs/cgroup/memory.max': `${256 * MiB}\n` })
  t.same(cgroupLimit(root), { bytes: 256 * MiB, source: 'cgroup v2' })
})

t.test('no cgroup file system (another OS, a bare /proc): no cgroup limit', async t => {
  t.equal(cgroupLimit(await tempDir(t)), null)
  t.equal(resolveBudget(null, { root: await tempDir(t), machineBytes: 4096 * MiB }).source, 'machine')
})

t.test('the estimate: a fixed part and a part per byte, by format and by where the file is parsed', async t => {
  t.equal(estimatePeak(1_000_000, 'json'), Math.ceil(PEAK_ESTIMATE.inline.json.fixedBytes + 1_000_000 * PEAK_ESTIMATE.inline.json.perFileByte))
  t.equal(estimatePeak(THREADS_FROM_BYTES, 'jsonl'), Math.ceil(PEAK_ESTIMATE.pool.jsonl.fixedBytes + THREADS_FROM_BYTES * PEAK_ESTIMATE.pool.jsonl.perFileByte))
  t.ok(estimatePeak(400e6, 'jsonl') > estimatePeak(100e6, 'jsonl'), 'a larger file needs more')
  t.equal(estimatePeak(400e6, 'json', 0.5), Math.ceil(estimatePeak(400e6, 'json') / 2), 'MEMORY_ESTIMATE_SCALE scales it')
})

t.test('the refusal says it in MB: needed, free, budget', async t => {
  t.equal(shortfallText({ neededBytes: 1480 * MiB, freeBytes: 610 * MiB, budgetBytes: 1200 * MiB }),
    'needs ~1,480 MB at its peak; 610 MB of the 1,200 MB budget are free')
  t.equal(shortfallText({ neededBytes: 10 * MiB, freeBytes: -5 * MiB, budgetBytes: 100 * MiB }),
    'needs ~10 MB at its peak; 0 MB of the 100 MB budget are free', 'a budget already passed has nothing free')
})

t.test('a process\'s guard refuses a file whose peak does not fit beside what it holds, with its numbers', async t => {
  const guard = new ProcessMemoryGuard({ bytes: 1200 * MiB, source: 'MEMORY_LIMIT_MB' }, { rss: () => 590 * MiB })
  const size = 800e6
  const error = await guard.admit('/srv/big.jsonl', size, 'jsonl').then(() => null, (error: unknown) => error)
  t.ok(error instanceof TooBigError)
  const refusal = error as TooBigError
  t.equal(refusal.code, 'SNAPSHOT_ERR_TOO_BIG')
  t.same(refusal.shortfall, { neededBytes: estimatePeak(size, 'jsonl'), freeBytes: 610 * MiB, budgetBytes: 1200 * MiB })
  t.equal(refusal.message, `snapshot /srv/big.jsonl does not fit in memory: ${shortfallText(refusal.shortfall)}`)
  const fits = await guard.admit('/srv/small.jsonl', 100e6, 'jsonl')
  t.doesNotThrow(() => fits.check(), 'one that fits is let through, its watch quiet below the budget')
})

t.test('the request journals\' room is set aside: a file that fits beside what the process holds, but not beside it too, is refused', async t => {
  const reservedBytes = journalReserve({ requestJournal: true, requestJournalSize: 100_000 }, 4)
  t.equal(reservedBytes, 4 * 100_000 * 1024, 'REQUEST_JOURNAL_SIZE KiB for each thread that answers')
  t.equal(journalReserve({ requestJournal: false, requestJournalSize: 100_000 }, 4), 0, 'nothing when it is off')
  t.equal(journalReserve({ requestJournal: true, requestJournalSize: 1000 }, 0), 1000 * 1024, 'the one process: one journal')
  const budget = { bytes: 1200 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const size = 300e6
  await new ProcessMemoryGuard(budget, { rss: () => 590 * MiB }).admit('/srv/s.jsonl', size, 'jsonl')
  const error = await new ProcessMemoryGuard(budget, { rss: () => 590 * MiB, reservedBytes }).admit('/srv/s.jsonl', size, 'jsonl')
    .then(() => null, (error: unknown) => error)
  t.ok(error instanceof TooBigError, 'refused with the journals\' room set aside')
  t.equal((error as TooBigError).shortfall.freeBytes, 1200 * MiB - 590 * MiB - reservedBytes, 'the room counted as in use')
})

t.test('the watch: quiet below the budget, a TooBigError from the moment the process reaches it', async t => {
  let rss = 900 * MiB
  const watch = watchLoad('/srv/s.json', 200 * MiB, 1000 * MiB, () => rss)
  t.doesNotThrow(() => watch.check())
  rss = 1000 * MiB
  t.throws(() => watch.check(), { code: 'SNAPSHOT_ERR_TOO_BIG', problems: ['reached the 1,000 MB budget while loading (1,000 MB in use; estimated to need ~200 MB at its peak): the load was abandoned'] })
})

/**
 * A model's worth of shared memory, let go (its memory retired): until the GC takes it, the process's RSS
 * still counts it. Made outside any async function, whose suspended frame would keep it alive.
 */
function retiredMemory (): WeakRef<SharedArrayBuffer> {
  const shared = new SharedArrayBuffer(4 * MiB)
  new ItemMemory([Buffer.from(shared)]).retire()
  return new WeakRef(shared)
}

t.test('a load that does not fit waits for memory already let go to be collected, then is admitted', async t => {
  // The collection is forced here (a context made after the flag, as parse-worker.ts does): the hint alone
  // would come when V8 decides.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const taken = retiredMemory()
  const collected = (): boolean => taken.deref() === undefined
  await new Promise(resolve => setImmediate(resolve))
  const budget = { bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const guard = new ProcessMemoryGuard(budget, { rss: () => collected() ? 10 * MiB : 199 * MiB })
  const admitted = guard.admit('next.json', MiB, 'json')
  setImmediate(gc)
  const watch = await admitted
  t.ok(collected(), 'admitted once the memory let go was collected')
  t.equal(typeof watch.check, 'function')
})

t.test('with nothing on its way out, a load that does not fit is refused on the first reading', async t => {
  let readings = 0
  // A second reading would find room: it is never taken, since no memory is on its way out.
  const rss = (): number => readings++ === 0 ? 199 * MiB : 10 * MiB
  const guard = new ProcessMemoryGuard({ bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' }, { rss, going: () => false })
  await t.rejects(guard.admit('next.json', MiB, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' })
  t.equal(readings, 1)
})

t.test('with memory on its way out, RSS is read again until the load fits, or refused when it never does', async t => {
  let readings = 0
  // The heap's and the parse threads' garbage leave RSS after the chunks: no event says when.
  const falling = (): number => readings++ < 3 ? 199 * MiB : 150 * MiB
  const guard = new ProcessMemoryGuard({ bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' }, { rss: falling, going: () => true })
  const watch = await guard.admit('next.json', MiB, 'json')
  t.equal(readings, 4, 'read until it fit, no more')
  t.doesNotThrow(() => watch.check(), 'admitted once RSS fell')
  const stuck = new ProcessMemoryGuard({ bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' }, { rss: () => 199 * MiB, going: () => true, waitMs: 200 })
  await t.rejects(stuck.admit('next.json', 10 * MiB, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' }, 'refused when RSS never falls')
})

t.test('while RSS keeps falling the wait goes on past its time, up to five times it; a fall that stops, or a bounce, ends it', async t => {
  const budget = { bytes: 200 * MiB, source: 'MEMORY_LIMIT_MB' } as const
  const guard = (rss: () => number, waitMs: number): ProcessMemoryGuard => new ProcessMemoryGuard(budget, { rss, going: () => true, waitMs })
  // 2 MB less a reading: a file estimated at ~40 MB fits after 20 readings (~1 s), where the wait is 0.6 s (five times
  // it, 3 s, leaves room for a loaded machine's late timers).
  let readings = 0
  const watch = await guard(() => Math.max(150, 199 - 2 * readings++) * MiB, 600).admit('next.json', 11 * MiB, 'json')
  t.equal(readings, 21, 'admitted at the 21st reading, RSS falling all along')
  t.doesNotThrow(() => watch.check())
  // Falling at first, then stuck short of the room: refused a wait after the last fall, not at the longest.
  readings = 0
  await t.rejects(guard(() => Math.max(190, 199 - 2 * readings++) * MiB, 300).admit('next.json', 11 * MiB, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' })
  t.ok(readings < 20, `refused at reading ${readings}, about a wait after the last fall, not at the longest (30)`)
  // Up and down by 2 MB (the requests' garbage): no fall, refused after one wait.
  readings = 0
  await t.rejects(guard(() => (readings++ % 2 === 0 ? 199 : 197) * MiB, 300).admit('next.json', 11 * MiB, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' })
  t.ok(readings < 20, `refused at reading ${readings}, not at the longest (30)`)
  // Falling for ever, 1 MB a reading, too slowly to fit within five waits (39 readings): refused at the longest.
  readings = 0
  await t.rejects(guard(() => (199 - readings++) * MiB, 100).admit('next.json', 11 * MiB, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' })
  t.ok(readings > 100 / 50 + 2 && readings < 39, `refused at reading ${readings}: waited past one wait, not until it fit`)
})

t.test('the service\'s guard asks the serving threads too: a version one still holds is memory on its way out', async t => {
  let asked = 0
  const config = { memoryLimitMb: 64, memoryEstimateScale: 1 }
  const started = Date.now()
  await t.rejects(memoryGuard(config, () => { asked++; return true }).admit('big.json', 1e9, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' })
  t.equal(asked, 1, 'asked once, before the refusal')
  t.ok(Date.now() - started >= 2000, 'and the refusal waited for it, as for the control\'s own')
  asked = 0
  await t.rejects(memoryGuard(config, () => { asked++; return false }).admit('big.json', 1e9, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' })
  t.equal(asked, 1)
})

t.test('memory is going while retired chunks wait for the GC, and for the given time after they went', async t => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  // Made outside the async function, whose suspended frame would keep the chunk alive.
  const memory = ((): ItemMemory => {
    const retired = new ItemMemory([Buffer.from(new SharedArrayBuffer(4 * MiB))])
    retired.retire()
    return retired
  })()
  await new Promise(resolve => setImmediate(resolve))
  t.equal(memory.status, 'released')
  t.ok(memoryGoing(0), 'waiting for the GC, however short the time')
  gc()
  await memory.freed
  t.ok(memoryGoing(60_000), 'just taken: still going for a while')
  t.notOk(memoryGoing(0), 'once the time has passed, not going')
})

t.test('the caches requests fill are reserved: a file that fits only in their room is refused, their room not counted free', async t => {
  const budget = { bytes: 1200 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const size = 500e6
  const free = budget.bytes - 400 * MiB
  t.ok(estimatePeak(size, 'json') < free, 'the file fits beside what the process holds')
  const reservedBytes = 2 * servingCachesBytes(64 * MiB)
  t.ok(estimatePeak(size, 'json') > free - reservedBytes, 'but not beside two threads\' full caches')
  await new ProcessMemoryGuard(budget, { rss: () => 400 * MiB }).admit('/srv/s.json', size, 'json')
  const guard = new ProcessMemoryGuard(budget, { rss: () => 400 * MiB, reservedBytes, going: () => false })
  const error = await guard.admit('/srv/s.json', size, 'json').then(() => null, (error: unknown) => error) as TooBigError
  t.equal(error?.code, 'SNAPSHOT_ERR_TOO_BIG')
  t.same(error.shortfall, { neededBytes: estimatePeak(size, 'json'), freeBytes: free - reservedBytes, budgetBytes: budget.bytes })
  t.equal(error.problems[0], `${shortfallText(error.shortfall)} (${Math.round(reservedBytes / MiB)} MB kept for the caches)`, 'the refusal says so')
  // This process's own RSS, with half the reserve to spare.
  const config = { memoryLimitMb: Math.ceil((process.memoryUsage.rss() + estimatePeak(size, 'json') + reservedBytes / 2) / MiB), memoryEstimateScale: 1 }
  await memoryGuard(config, () => false).admit('/srv/s.json', size, 'json')
  await t.rejects(memoryGuard(config, () => false, reservedBytes).admit('/srv/s.json', size, 'json'), { code: 'SNAPSHOT_ERR_TOO_BIG' }, 'the service\'s guard takes the reserve')
})

t.test('a serving thread\'s caches at most: PAGE_CACHE_MB, the doorkeeper\'s hashes, the unions', async t => {
  t.equal(unionCacheBytes(64 * MiB), 16 * MiB, 'unions: a quarter of the page cache\'s')
  t.equal(servingCachesBytes(64 * MiB), 64 * MiB + DOORKEEPER_MAX_BYTES + 16 * MiB)
  t.equal(Math.round(servingCachesBytes(64 * MiB) / MiB), 81, 'the 81 MB the guides name')
  t.equal(servingCachesBytes(0), 0, 'PAGE_CACHE_MB=0: no page cache, no doorkeeper, no unions kept')
})
