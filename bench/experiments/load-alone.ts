// One snapshot load, alone in a process, no server: how long `loadSnapshotFile` takes and what RSS it
// settles at, for comparing loaders (another checkout's dist/) and parse-thread counts side by side.
// `node --expose-gc --import tsx bench/experiments/load-alone.ts SNAPSHOT [CHECKOUT]` (CHECKOUT: a
// directory with a built dist/, default this one); THREADS=n sets the parse threads (0: the loading
// thread). With --expose-gc, the RSS is read after three full collections half a second apart, and split
// into external (item bytes, where they are ArrayBuffers), V8's heap and "the rest" (mostly the C allocator).
import { dirname, resolve } from 'node:path'
import { existsSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

type Model = { itemCounts: () => Record<string, number> }
/** What this needs of a checkout's built loader (an older build's too, so not imported by type). */
interface Loader {
  loadSnapshotFile: (file: string) => Promise<Model>
  SnapshotLoader?: new (parts: { pool: unknown }) => { load: (file: string) => Promise<Model> }
}

declare global {
  // Kept reachable while the RSS is read.
  var loadedModel: unknown
}

const [file, checkout = '.'] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: node --expose-gc --import tsx bench/experiments/load-alone.ts SNAPSHOT [CHECKOUT]')
  process.exit(2)
}
// dist/snapshot/load/ since the one pipeline; dist/snapshot/ before it.
const built = ['dist/snapshot/load/load-snapshot.js', 'dist/snapshot/load-snapshot.js'].map(path => resolve(checkout, path)).find(path => existsSync(path))
if (built === undefined) {
  console.error(`no built loader in ${checkout}: run npm run build there`)
  process.exit(2)
}
const { loadSnapshotFile, SnapshotLoader } = await import(pathToFileURL(built).href) as Loader
/** THREADS: a loader on a pool of its own size (the process's pool takes one a core, up to four). */
async function loaderFor (threads: string | undefined): Promise<(file: string) => Promise<Model>> {
  if (threads === undefined) return loadSnapshotFile
  const poolFile = resolve(dirname(built as string), 'parse-pool.js')
  if (SnapshotLoader === undefined || !existsSync(poolFile)) throw new Error(`THREADS needs a checkout with ${poolFile}`)
  const { ParsePool } = await import(pathToFileURL(poolFile).href) as { ParsePool: new (options: { threads: number }) => unknown }
  const loader = new SnapshotLoader({ pool: new ParsePool({ threads: Number(threads) }) })
  return async file => await loader.load(file)
}
const load = await loaderFor(process.env.THREADS)
const started = performance.now()
const model = await load(file)
const seconds = (performance.now() - started) / 1000
globalThis.loadedModel = model
const gc = globalThis.gc
// SETTLE_S=n waits that long before the collections: a lasting parse pool's threads (and their memory)
// exit after 30 s idle (ADR 022), so SETTLE_S=35 reads the RSS without them.
await sleep(Number(process.env.SETTLE_S ?? 0) * 1000)
if (gc !== undefined) {
  for (let i = 0; i < 3; i++) {
    gc()
    await sleep(500)
  }
}
const { rss, external, heapTotal } = process.memoryUsage()
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`
console.log(`${checkout} threads=${process.env.THREADS ?? 'default'}: load ${seconds.toFixed(2)} s; RSS ${mb(rss)}` +
  `${gc !== undefined ? ' settled' : ' (no --expose-gc: not settled)'}, external ${mb(external)}, V8 heap ${mb(heapTotal)}, ` +
  `the rest ${mb(rss - external - heapTotal)}; items ${JSON.stringify(model.itemCounts())}`)
process.exit(0)
