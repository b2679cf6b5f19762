// The floor under a rollback from an image (ADR 033): one version held as served, then, alternating, an image
// read as a rollback reads it and the same bytes read raw into fresh shared memory (two reads in flight).
// `node --expose-gc --import tsx bench/experiments/rollback-floor.ts STATE_DIR/images/<digest>.image [ROUNDS]`
import { open } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { readImage, readImageHeader } from '../../src/snapshot/images/version-image.js'

const file = process.argv[2] as string
const rounds = Number(process.argv[3] ?? 4)
const PIECE = 8 * 1024 * 1024

async function image (): Promise<unknown> {
  const handle = await open(file, 'r')
  try {
    return await readImage(handle, await readImageHeader(handle), file)
  } finally {
    await handle.close()
  }
}

async function raw (): Promise<unknown> {
  const handle = await open(file, 'r')
  const { size } = await handle.stat()
  const bytes = new Uint8Array(new SharedArrayBuffer(size))
  const reads: Array<Promise<unknown>> = []
  for (let at = 0; at < size; at += PIECE) {
    reads.push(handle.read(bytes, at, Math.min(PIECE, size - at), at))
    if (reads.length >= 2) await reads.shift()
  }
  await Promise.all(reads)
  await handle.close()
  return bytes
}

const collect = (globalThis as { gc?: () => void }).gc ?? (() => { throw new Error('run with --expose-gc') })
const served = await image()
const system = (): number => process.cpuUsage().system / 1e3
for (let round = 0; round < rounds; round++) {
  const order: Array<[string, () => Promise<unknown>]> = [['image', image], ['raw', raw]]
  for (const [name, read] of round % 2 === 0 ? order : order.reverse()) {
    collect()
    await sleep(500)
    const [cpu, started] = [system(), performance.now()]
    await read()
    const ms = performance.now() - started
    console.log(`${name} ${ms.toFixed(0)} ms, kernel ${(system() - cpu).toFixed(0)} ms, rss ${(process.memoryUsage.rss() / 1e9).toFixed(2)} GB`)
  }
}
console.log(`(one version held throughout: ${served === null ? 'none' : 'yes'})`)
