// The items of a valid snapshot file, either format, streamed one at a time with the language each is
// listed under: never the whole file in memory. For the tools that walk a snapshot the loader has already
// accepted (convert, diff); the loader itself frames and checks in batches instead (load/load-snapshot.ts).
import { isJsonLinesPath } from './load/load-snapshot.js'
import { startsWithBom } from './load/json-text.js'
import { readLines } from './load/read-lines.js'
import { readDocument } from './load/read-document.js'

/**
 * One item: its language, the item as the file has it (a JSON Lines item without its `language`), and its
 * place (the line of a JSON Lines file, the index in its language's array of a document). Awaited: a
 * writer's backpressure holds the reading.
 */
export type EachItem = (language: string, item: Record<string, unknown>, place: number) => void | Promise<void>

export async function readItems (file: string, each: EachItem): Promise<void> {
  if (isJsonLinesPath(file)) await readLineItems(file, each)
  else await readDocumentItems(file, each)
}

async function readDocumentItems (file: string, each: EachItem): Promise<void> {
  // The streamer hands items over synchronously; they are passed on after each chunk, with backpressure.
  let items: Array<[string, number, Record<string, unknown>]> = []
  await readDocument(file, {
    member () {},
    language () {},
    item (language, index, bytes) { items.push([language, index, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>]) },
    drain: async () => {
      const ready = items
      items = []
      for (const [language, index, item] of ready) await each(language, item, index)
    }
  })
}

async function readLineItems (file: string, each: EachItem): Promise<void> {
  let first = true
  await readLines(file, {
    line: async (bytes, number) => {
      // The loader accepted the file: only its blank lines, its byte order mark and its header to skip.
      const text = bytes.toString('utf8', startsWithBom(bytes) ? 3 : 0).trim()
      if (text === '') return true
      const value = JSON.parse(text) as Record<string, unknown>
      const header = first && 'snapshot' in value
      first = false
      if (header) return true
      const { language, ...item } = value
      await each(language as string, item, number)
      return true
    }
  })
}
