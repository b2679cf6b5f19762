// The reference merge (`explore-replica apply`): a snapshot and its change files as one document, what a
// replica applying them must serve byte for byte. Items as given, every field kept, for a full load.
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
 * What `changes` (op lines per file, in order) make of `snapshot`, left as it is: an upsert replaces the item
 * in place or adds it (a new language last); a delete removes it; an emptied language stays.
 */
export function applyChangesToSnapshot (
  snapshot: SnapshotDocument, changes: Iterable<readonly ChangeLine[]>
): SnapshotDocument {
  const languages = new Map<string, Map<number, SnapshotItem>>()
  for (const [language, items] of Object.entries(snapshot.languages)) {
    languages.set(language, new Map(items.map(item => [item.pk, item])))
  }
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
  return {
    ...snapshot,
    languages: Object.fromEntries([...languages].map(([language, items]) => [language, [...items.values()]]))
  }
}
