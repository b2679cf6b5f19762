// The change file both change workloads publish (BENCHMARKS.md's change-file goal: 1,000 upserts and 100 deletes): the editor's
// drop into a served snapshot's change directory (run.ts) and the fleet's publish to a manifest
// (fleet-change.ts). Written from the snapshot's own first items, so every upsert edits an item served.
import { createReadStream } from 'node:fs'
import { open, writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'

/** Items the change file upserts (each one's title edited) and deletes. */
export const CHANGE_UPSERTS = 1000
export const CHANGE_DELETES = 100

/**
 * Writes the change file from the first items of a JSON Lines snapshot (no parse of the whole file needed),
 * flushed; returns its size. The title edit marks every upserted item: `(edited)` at the end. `skip`: items
 * passed over first (a second change file of other items); `upserts` and `deletes`: another shape than the goal's.
 */
export async function writeChangeFile (snapshot: string, out: string, id = 'bench-0001', skip = 0,
  upserts = CHANGE_UPSERTS, deletes = CHANGE_DELETES): Promise<number> {
  const lines: string[] = [JSON.stringify({ changes: 'explore', version: 1, id })]
  const input = createReadStream(snapshot)
  const reader = createInterface({ input, crlfDelay: Infinity })
  let items = -skip
  for await (const line of reader) {
    const item = JSON.parse(line) as Record<string, unknown>
    if (!('pk' in item)) continue // the header
    if (items < 0) {
      items++
      continue
    }
    if (items < upserts) lines.push(JSON.stringify({ op: 'upsert', ...item, translated_title: `${String(item.translated_title)} (edited)` }))
    else lines.push(JSON.stringify({ op: 'delete', language: item.language, pk: item.pk }))
    if (++items === upserts + deletes) break
  }
  reader.close()
  input.destroy()
  if (items < upserts + deletes) throw new RangeError(`${snapshot} has too few items for a change file of ${upserts} upserts and ${deletes} deletes after ${skip}`)
  const text = lines.join('\n') + '\n'
  await writeFile(out, text)
  await flushed(out)
  return Buffer.byteLength(text)
}

/** Flushed to disk, so that writing it does not fall inside a measurement. */
export async function flushed (file: string): Promise<void> {
  const handle = await open(file, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
