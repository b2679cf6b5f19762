// Parses, checks and adds a run of a snapshot's items to a model builder, from where a scan found them in
// the file's bytes. The loading thread and the item worker thread both run it; it imports only what it runs.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../schemas/formats.js'
import { SnapshotItemSchema, type SnapshotItem } from '../schemas/snapshot.js'
import type { SnapshotModelBuilder } from './build-model.js'

// Compiled once per thread: checking 200k items is then a tight loop, not an interpretation of the schema.
const itemCheck = TypeCompiler.Compile(SnapshotItemSchema)

/** Where items are in a document's bytes, and which language's array each is in, at which index. */
export interface ItemPlaces {
  languages: string[]
  itemCount: number
  itemLanguage: ArrayLike<number>
  itemIndex: ArrayLike<number>
  itemStart: ArrayLike<number>
  itemEnd: ArrayLike<number>
  /** Where the last call to addItems stopped. */
  next: number
}

/**
 * Parses, checks and adds items from `from` up to `to`, for about `budgetMs` (the rest are left for the
 * next call, from `scanned.next`). Returns false at the first item that is not valid.
 */
export function addItems (raw: Buffer, scanned: ItemPlaces, builder: SnapshotModelBuilder, from: number, to: number, budgetMs: number): boolean {
  const deadline = performance.now() + budgetMs
  let i = from
  try {
    for (; i < to; i++) {
      // Reading the clock costs more than an item: look at it every 64 items.
      if ((i & 63) === 0 && i > from && performance.now() > deadline) break
      const item: unknown = JSON.parse(raw.toString('utf8', scanned.itemStart[i], scanned.itemEnd[i]))
      const language = scanned.languages[scanned.itemLanguage[i] as number] as string
      if (!itemCheck.Check(item) || builder.add(language, scanned.itemIndex[i] as number, item as SnapshotItem) >= 0) return false
    }
  } catch (error) {
    if (error instanceof SyntaxError) return false
    throw error
  }
  scanned.next = i
  return true
}
