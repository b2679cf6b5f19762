// One snapshot load, alone in a process, no server: how long `loadSnapshotFile` takes and what RSS it
// settles at, for comparing loaders (another checkout's dist/) and parse-thread counts side by side.
// `node --expose-gc bench/experiments/load-alone.mjs SNAPSHOT [CHECKOUT]` (CHECKOUT: a directory with a
// built dist/, default this one); THREADS=n sets the parse threads (JSON Lines; 0: the loading thread).
// With --expose-gc, the RSS is read after three full collections half a second apart.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const [file, checkout = '.'] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: node --expose-gc bench/experiments/load-alone.mjs SNAPSHOT [CHECKOUT]')
  process.exit(2)
}
const { loadSnapshotFile } = await import(pathToFileURL(resolve(checkout, 'dist/snapshot/load-snapshot.js')).href)
const started = performance.now()
const model = await loadSnapshotFile(file, process.env.THREADS === undefined ? {} : { threads: Number(process.env.THREADS) })
const seconds = (performance.now() - started) / 1000
globalThis.model = model
if (typeof globalThis.gc === 'function') {
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}
const { rss, external, heapTotal } = process.memoryUsage()
const mb = bytes => `${(bytes / 1e6).toFixed(0)} MB`
console.log(`${checkout} threads=${process.env.THREADS ?? 'default'}: load ${seconds.toFixed(2)} s; RSS ${mb(rss)}${typeof globalThis.gc === 'function' ? ' settled' : ' (no --expose-gc: not settled)'}, external ${mb(external)}, V8 heap ${mb(heapTotal)}, the rest ${mb(rss - external - heapTotal)}; items ${JSON.stringify(model.itemCounts())}`)
process.exit(0)
