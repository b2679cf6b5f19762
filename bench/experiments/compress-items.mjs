// What compressing the stored items would cost: each item deflated on its own with a shared 32 KiB
// dictionary (the only way to inflate one item without its neighbours), then 20-item pages inflated with
// Node's zlib, against copying the same items. Evidence for BENCHMARKS.md ("Settled RSS"); not used by
// the service. Reads a snapshot in the generator's layout (one item per line).
// Usage: node bench/experiments/compress-items.mjs bench/.data/snapshot-200k-….json
import { readFileSync } from 'node:fs'
import { deflateRawSync, inflateRawSync } from 'node:zlib'

const [file] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: node bench/experiments/compress-items.mjs SNAPSHOT.json')
  process.exit(2)
}
const PAGE = 20
const items = readFileSync(file, 'utf8').split('\n')
  .filter(line => line.trimStart().startsWith('{"pk"'))
  .slice(0, 21_000)
  .map(line => Buffer.from(line.trim().replace(/,$/, '')))
// The dictionary from items that are not measured.
const dictionary = Buffer.concat(items.slice(0, 40)).subarray(0, 32 * 1024)
const sample = items.slice(1000)
const packed = sample.map(item => deflateRawSync(item, { dictionary, level: 9, memLevel: 9 }))
const size = list => list.reduce((sum, b) => sum + b.length, 0)
console.log(`${sample.length} items: ${size(sample)} bytes, ${size(packed)} deflated (${(size(packed) / size(sample)).toFixed(3)})`)

function perPage (label, work) {
  const pages = Math.floor(sample.length / PAGE)
  for (let round = 0; round < 2; round++) { // the first round warms up
    const started = process.hrtime.bigint()
    for (let p = 0; p < pages; p++) work(p * PAGE)
    const micros = Number(process.hrtime.bigint() - started) / 1e3 / pages
    if (round === 1) console.log(`${label}: ${micros.toFixed(1)} µs per ${PAGE}-item page`)
  }
}
const out = Buffer.allocUnsafe(1 << 20)
perPage('inflate', from => {
  let at = 0
  for (let i = from; i < from + PAGE; i++) at += inflateRawSync(packed[i], { dictionary }).copy(out, at)
})
perPage('copy', from => {
  let at = 0
  for (let i = from; i < from + PAGE; i++) at += sample[i].copy(out, at)
})
