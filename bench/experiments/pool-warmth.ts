// What a warm parse pool saves a reload (BENCHMARKS.md's load-pipeline goal asked the 1M reload to be faster "since a warm pool
// compiles nothing"): the first batch of a snapshot on a pool whose threads must start (a new isolate, the
// worker's modules loaded, the TypeBox checks and the serializer compiled on first use), against the same
// batch on the same threads once warm. The built pool and worker (dist/), so that no TypeScript loader runs
// in the threads: under Node 22.6+ (types stripped) no loader at all; under tsx, the threads load tsx too.
// Usage: npm run build && node bench/experiments/pool-warmth.ts SNAPSHOT.jsonl [ROUNDS]   (Node 24)
//        npm run build && node --import tsx bench/experiments/pool-warmth.ts SNAPSHOT.jsonl [ROUNDS]
import { open } from 'node:fs/promises'

type PoolModule = typeof import('../../src/snapshot/load/parse-pool.js')
const { ParsePool, THREAD_BATCH_BYTES } = await import(new URL('../../dist/snapshot/load/parse-pool.js', import.meta.url).href) as PoolModule

const [file, roundsText = '5'] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: node --import tsx bench/experiments/pool-warmth.ts SNAPSHOT.jsonl [ROUNDS]')
  process.exit(2)
}

/** The snapshot's first THREAD_BATCH_BYTES cut at a line's end, as the loader would frame its first batch. */
async function firstBatch (): Promise<Uint8Array> {
  const handle = await open(file as string, 'r')
  try {
    const bytes = Buffer.allocUnsafeSlow(THREAD_BATCH_BYTES)
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0)
    return bytes.subarray(0, bytes.lastIndexOf(10, bytesRead - 1) + 1)
  } finally {
    await handle.close()
  }
}

const template = await firstBatch()
const timeOne = async (pool: InstanceType<PoolModule['ParsePool']>): Promise<number> => {
  const started = performance.now()
  const parser = await pool.parserFor(Infinity, false)
  // A copy each time: the batch's memory moves to the thread.
  const bytes = new Uint8Array(new ArrayBuffer(template.length))
  bytes.set(template)
  await parser.parse({ kind: 'lines', bytes, first: true })
  return performance.now() - started
}

for (let round = 0; round < Number(roundsText); round++) {
  const pool = new ParsePool({ threads: 1 })
  const cold = await timeOne(pool)
  const warm = [await timeOne(pool), await timeOne(pool), await timeOne(pool)]
  await pool.close()
  console.log(`batch of ${(template.length / 1e6).toFixed(1)} MB: cold pool ${cold.toFixed(0)} ms, warm ${warm.map(ms => ms.toFixed(0)).join(', ')} ms`)
}
