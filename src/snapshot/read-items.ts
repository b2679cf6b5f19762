// A valid snapshot's items, either format, streamed with their language for convert and diff.
import { isJsonLinesPath } from './load/load-snapshot.js'
import { startsWithBom } from './load/json-text.js'
import { readLines } from './load/read-lines.js'
import { readDocument } from './load/read-document.js'

/** `place`: line, or index in its language. Awaited: a writer's backpressure holds the reading. */
type EachItem = (language: string, item: Record<string, unknown>, place: number) => void | Promise<void>

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
    item (language, index, bytes) {
      items.push([language, index, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>])
    },
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
      // The loader accepted the file: only blank lines, a BOM and the header to skip.
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
