// The one writer of snapshot files: the generator, converter and capture write the same bytes for the same items.
import { isJsonLinesPath } from './load/load-snapshot.js'
import { writeThroughTemporary, type TemporaryFileOptions, type WrittenFile } from '../write-through-temporary.js'

/** 'pretty': JSON.stringify(snapshot, null, 2); 'compact': the same document, an item a line; 'jsonl': JSON Lines. */
export type SnapshotFormat = 'pretty' | 'compact' | 'jsonl'

// Pretty-printing triples the whitespace; past this many items a human no longer reads the file anyway.
export const PRETTY_MAX_ITEMS = 5000

export function formatBytes (bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} KB`
}

export function documentFormat (items: number): 'pretty' | 'compact' {
  return items <= PRETTY_MAX_ITEMS ? 'pretty' : 'compact'
}

export function formatFor (path: string, items: number): SnapshotFormat {
  return isJsonLinesPath(path) ? 'jsonl' : documentFormat(items)
}

interface SnapshotContent {
  generatedAt: string | null
  /** Those without items included. */
  languages: readonly string[]
  /** Push, not pull: the converter's readers call back as they find items. */
  items: (language: string, each: (item: object) => Promise<void>) => Promise<void>
}

interface WriteFileOptions extends TemporaryFileOptions {
  format: SnapshotFormat
}

/** A watching service never sees half a snapshot. */
export async function writeSnapshotFile (
  path: string, content: SnapshotContent, options: WriteFileOptions
): Promise<WrittenFile> {
  const { format, check, signal } = options
  return await writeThroughTemporary(path, async emit => {
    if (format === 'jsonl') await writeLines(content, emit)
    else await writeDocument(content, format, emit)
  }, { check, signal })
}

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
