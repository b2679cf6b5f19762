// A snapshot and its change files merged into one snapshot document: what a replica that
// applies the change files must serve, byte for byte, and what `explore-replica apply` writes. Items as
// given, not rendered: the merged snapshot keeps every field (companies, extras) a full load reads.
import type { SnapshotItem } from '../../schemas/snapshot.js'

/** A snapshot in format v1, in memory. */
export interface SnapshotDocument {
  generated_at?: string
  languages: Record<string, SnapshotItem[]>
  [member: string]: unknown
}

/** A change file's op line as given (the header apart): an upsert's item fields, or a delete's pk. */
export type ChangeLine =
  | ({ op: 'upsert', language: string } & SnapshotItem)
  | { op: 'delete', language: string, pk: number }

/**
 * The snapshot that `changes` (each file's op lines in order, files in order) make of `snapshot`, which is
 * left as it is. An upsert replaces the item with its pk in its language (where it was) or adds it (a new
 * language last); a delete removes it, if there; a language keeps being served once emptied.
 */
export function applyChangesToSnapshot (snapshot: SnapshotDocument, changes: Iterable<readonly ChangeLine[]>): SnapshotDocument {
  const languages = new Map<string, Map<number, SnapshotItem>>()
  for (const [language, items] of Object.entries(snapshot.languages)) languages.set(language, new Map(items.map(item => [item.pk, item])))
  for (const lines of changes) {
    for (const line of lines) {
      let items = languages.get(line.language)
      if (line.op === 'delete') {
        items?.delete(line.pk)
        continue
      }
      if (items === undefined) languages.set(line.language, items = new Map())
      const { op: _op, language: _language, ...item } = line
      items.set(item.pk, item)
    }
  }
  return { ...snapshot, languages: Object.fromEntries([...languages].map(([language, items]) => [language, [...items.values()]])) }
}
