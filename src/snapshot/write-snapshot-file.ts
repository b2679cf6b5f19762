// The one writer of snapshot files, item by item in either format, through a temporary file checked and then
// renamed into place: the generator, converter and capture write the same bytes for the same items.
import { isJsonLinesPath } from './load/load-snapshot.js'
import { writeThroughTemporary, type TemporaryFileOptions, type WrittenFile } from '../write-through-temporary.js'

/** 'pretty': JSON.stringify(snapshot, null, 2); 'compact': the same document, an item a line; 'jsonl': JSON Lines. */
export type SnapshotFormat = 'pretty' | 'compact' | 'jsonl'

// Pretty-printing triples the whitespace; past this many items a human no longer reads the file anyway.
export const PRETTY_MAX_ITEMS = 5000

/** A written file's size for a person: the generator's and the capture's summaries. */
export function formatBytes (bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} KB`
}

/** A format v1 document is pretty-printed while a person may still read it, one item a line past that. */
export function documentFormat (items: number): 'pretty' | 'compact' {
  return items <= PRETTY_MAX_ITEMS ? 'pretty' : 'compact'
}

/** The format a path and an item count call for, unless one is asked for. */
export function formatFor (path: string, items: number): SnapshotFormat {
  return isJsonLinesPath(path) ? 'jsonl' : documentFormat(items)
}

interface SnapshotContent {
  /** Written when not null (the JSON Lines header's and the document's `generated_at`). */
  generatedAt: string | null
  /** Every language served, those without items included, in the order written. */
  languages: readonly string[]
  /**
   * Hands one language's items to `each` in order, awaiting each (backpressure); written as JSON.stringify
   * gives them. Push, not pull: the converter's readers call back as they find items.
   */
  items: (language: string, each: (item: object) => Promise<void>) => Promise<void>
}

interface WriteFileOptions extends TemporaryFileOptions {
  /** 'jsonl' for JSON Lines; 'pretty' and 'compact' are format v1 (see SnapshotFormat). */
  format: SnapshotFormat
}

/** Streams `content` to `path` through a temporary file: a watching service never sees half a snapshot. */
export async function writeSnapshotFile (
  path: string, content: SnapshotContent, options: WriteFileOptions
): Promise<WrittenFile> {
  const { format, check, signal } = options
  return await writeThroughTemporary(path, async emit => {
    if (format === 'jsonl') await writeLines(content, emit)
    else await writeDocument(content, format, emit)
  }, { check, signal })
}

/** A JSON Lines snapshot: the header, then one item per line with its `language` first. */
async function writeLines (content: SnapshotContent, emit: (piece: string) => Promise<void>): Promise<void> {
  const { generatedAt, languages } = content
  await emit(
    `${JSON.stringify({ snapshot: 'explore', version: 1, ...(generatedAt === null ? {} : { generated_at: generatedAt }), languages })}\n`
  )
  for (const language of languages) {
    await content.items(language, async item => {
      const own = (item as { language?: unknown }).language
      // JSON Lines reads an item's `language` as the language it is listed under.
      if (own !== undefined && own !== language) {
        throw new Error(
          `an item of ${language} has a field "language" (${JSON.stringify(own)}), which JSON Lines reads as the item's language`
        )
      }
      await emit(`${JSON.stringify({ language, ...item })}\n`)
    })
  }
}

/** A format v1 document; 'pretty' matches JSON.stringify(snapshot, null, 2), 'compact' puts an item per line. */
async function writeDocument (
  content: SnapshotContent, format: 'pretty' | 'compact', emit: (piece: string) => Promise<void>
): Promise<void> {
  const { generatedAt, languages } = content
  await emit(`{\n  ${generatedAt === null ? '' : `"generated_at": ${JSON.stringify(generatedAt)},\n  `}"languages": {`)
  for (const [l, language] of languages.entries()) {
    await emit(`${l === 0 ? '' : ','}\n    ${JSON.stringify(language)}: [`)
    let first = true
    await content.items(language, async item => {
      const json = format === 'pretty'
        ? JSON.stringify(item, null, 2).replaceAll('\n', '\n      ')
        : JSON.stringify(item)
      await emit(`${first ? '' : ','}\n      ${json}`)
      first = false
    })
    await emit(first ? ']' : '\n    ]')
  }
  await emit(languages.length === 0 ? '}\n}\n' : '\n  }\n}\n')
}
