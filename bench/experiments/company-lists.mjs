// What a language's company lists cost in RSS, by how they are kept: an array per company ("separate",
// what the model had), views of one array ("views"), or one array with offsets ("offsets", CompanyRanks).
// The list lengths come from a bench snapshot's meta file (bench/.data/*.meta.json).
// `node --expose-gc bench/experiments/company-lists.mjs separate|views|offsets META`
import { readFileSync } from 'node:fs'

const [mode, meta] = process.argv.slice(2)
if (meta === undefined || typeof globalThis.gc !== 'function') {
  console.error('usage: node --expose-gc bench/experiments/company-lists.mjs separate|views|offsets META')
  process.exit(2)
}
const sizes = []
for (const company of JSON.parse(readFileSync(meta, 'utf8')).companies) {
  for (const n of Object.values(company.items)) if (n > 0) sizes.push(n)
}
const total = sizes.reduce((a, b) => a + b, 0)
const settledRss = () => {
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().rss
}

const before = settledRss()
const kept = new Map()
if (mode === 'separate') {
  sizes.forEach((n, id) => kept.set(id, new Uint32Array(n).map((_, i) => i)))
} else if (mode === 'views') {
  const all = new Uint32Array(total).map((_, i) => i)
  let at = 0
  sizes.forEach((n, id) => { kept.set(id, all.subarray(at, at + n)); at += n })
} else if (mode === 'offsets') {
  const all = new Uint32Array(total).map((_, i) => i)
  const starts = new Uint32Array(sizes.length + 1)
  sizes.forEach((n, id) => { starts[id + 1] = starts[id] + n; kept.set(id, id) })
  kept.set('arrays', [all, starts])
} else {
  console.error(`unknown mode ${mode}`)
  process.exit(2)
}
const after = settledRss()
console.log(`${mode}: ${sizes.length} lists, ${total} ranks: ${((after - before) / 1e6).toFixed(1)} MB (${kept.size} kept)`)
