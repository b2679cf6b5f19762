// The one writer of change files (`explore-replica diff`): the header, then op lines, through a temporary
// file renamed into place once whole, so a watched changes directory never holds half a file.
import { writeThroughTemporary } from '../write-through-temporary.js'
import { ChangeFileError } from '../errors.js'

interface ChangeFileHeader {
  id: string
  generatedAt: string | null
}

/** What a change file says of one item: every field of its new version, or that it goes. */
type ChangeLine =
  | { op: 'upsert', language: string, item: Record<string, unknown> }
  | { op: 'delete', language: string, pk: number }

interface WrittenChanges {
  path: string
  bytes: number
  upserts: number
  deletes: number
}

/** Writes the header, then every line `lines` emits (awaited: backpressure); on failure `path` is left as it was. */
export async function writeChangeFile (
  path: string,
  header: ChangeFileHeader,
  lines: (emit: (line: ChangeLine) => Promise<void>) => Promise<void>
): Promise<WrittenChanges> {
  let upserts = 0
  let deletes = 0
  const written = await writeThroughTemporary(path, async emit => {
    const put = async (line: object): Promise<void> => { await emit(`${JSON.stringify(line)}\n`) }
    await put({
      changes: 'explore',
      version: 1,
      id: header.id,
      ...(header.generatedAt === null ? {} : { generated_at: header.generatedAt })
    })
    await lines(async line => {
      if (line.op === 'delete') {
        deletes++
        await put({ op: 'delete', language: line.language, pk: line.pk })
        return
      }
      // A change line reads these two as its own: an item carrying them cannot be written as one.
      if (Object.hasOwn(line.item, 'op')) {
        throw new ChangeFileError(
          `${line.language} item ${String(line.item.pk)} has a field "op", which a change file reads as the line's operation`
        )
      }
      if (line.item.language !== undefined && line.item.language !== line.language) {
        throw new ChangeFileError(
          `${line.language} item ${String(line.item.pk)} has a field "language" (${JSON.stringify(line.item.language)}), which a change file reads as the item's language`
        )
      }
      upserts++
      // `op` and `language` first, so a person reading the file sees what each line does.
      await put({ op: 'upsert', language: line.language, ...line.item })
    })
  })
  return { ...written, upserts, deletes }
}
