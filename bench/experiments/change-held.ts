// What the model holds per change file, by itself (no service, no RSS steps): heap used and array buffers after
// full collections, eight files of bench/page-speed.ts's shape on a model of N items built in memory, each
// version replacing the one before as the store does. For ADR 031; run it in each checkout to compare:
//   node --expose-gc --import tsx bench/experiments/change-held.ts [N]
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildModel, changeFileText } from '../page-speed.js'
import { readChangeFile } from '../../src/snapshot/changes/read-change-file.js'
import { deriveVersion, prepareForChanges } from '../../src/snapshot/model/derive-version.js'

const size = Number(process.argv[2] ?? 1_000_000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with --expose-gc')

function held (): { heap: number, buffers: number } {
  for (let i = 0; i < 4; i++) gc?.()
  const { heapUsed, arrayBuffers } = process.memoryUsage()
  return { heap: heapUsed / 1e6, buffers: arrayBuffers / 1e6 }
}

let model = await buildModel(size)
await prepareForChanges(model)
const dir = await mkdtemp(join(tmpdir(), 'change-held-'))
const file = join(dir, 'changes.jsonl')
let before = held()
const rises: string[] = []
for (let n = 0; n < 8; n++) {
  await writeFile(file, changeFileText(size, 1000, 100, n))
  model = await deriveVersion(model, await readChangeFile(file, { serving: true }))
  const after = held()
  rises.push(`heap ${(after.heap - before.heap).toFixed(2)}, buffers ${(after.buffers - before.buffers).toFixed(2)}`)
  before = after
}
await rm(dir, { recursive: true })
console.log(`held per file (MB): ${rises.join(' | ')}`)
