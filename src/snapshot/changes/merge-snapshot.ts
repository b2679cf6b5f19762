// The reference merge (`explore-replica apply`): what a replica applying change files must serve byte for byte.
import type { SnapshotItem } from '../../schemas/snapshot.js'

export interface SnapshotDocument {
  generated_at?: string
  languages: Record<string, SnapshotItem[]>
  [member: string]: unknown
}

export type ChangeLine =
  | ({ op: 'upsert', language: string } & SnapshotItem)
  | { op: 'delete', language: string, pk: number }

/** `snapshot` is left as it is; a new language goes last, an emptied one stays. */
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
