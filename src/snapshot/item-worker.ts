// The worker thread of worker-half.ts: adds the items it is sent to a model builder of its own, exactly
// as the loading thread adds its half (add-items.ts), and sends back what it built.
import { parentPort } from 'node:worker_threads'
import { SnapshotModelBuilder } from './build-model.js'
import { addItems } from './add-items.js'
import type { ItemOutcome, ItemTask } from './worker-half.js'

parentPort?.once('message', (task: ItemTask) => {
  const port = parentPort as NonNullable<typeof parentPort>
  const raw = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength)
  const builder = new SnapshotModelBuilder()
  const places = { ...task, itemCount: task.itemStart.length, next: 0 }
  if (!addItems(raw, places, builder, 0, places.itemCount, Infinity)) {
    port.postMessage({ valid: false } satisfies ItemOutcome)
    return
  }
  const parts = [...builder.parts()]
  const moved: ArrayBuffer[] = []
  for (const [, part] of parts) {
    for (const chunk of part.chunks) moved.push(chunk.buffer as ArrayBuffer)
    moved.push(part.chunkOf.buffer, part.offsetOf.buffer, part.lengthOf.buffer, part.dates.buffer, part.pks.buffer, part.companyIds.buffer, part.companyEnd.buffer)
  }
  port.postMessage({ valid: true, parts } satisfies ItemOutcome, moved)
})
