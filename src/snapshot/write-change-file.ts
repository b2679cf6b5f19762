// The one writer of change files: renamed into place once whole, so a watched directory never holds half of one.
import { writeThroughTemporary } from '../write-through-temporary.js'
import { ChangeFileError } from '../errors.js'

interface ChangeFileHeader {
  id: string
  generatedAt: string | null
}

type ChangeLine =
  | { op: 'upsert', language: string, item: Record<string, unknown> }
  | { op: 'delete', language: string, pk: number }

interface WrittenChanges {
  path: string
  bytes: number
  upserts: number
  deletes: number
}

/** On failure `path` is left as it was. */
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
      // First, so a person reading the file sees what each line does.
      await put({ op: 'upsert', language: line.language, ...line.item })
    })
  })
  return { ...written, upserts, deletes }
}
