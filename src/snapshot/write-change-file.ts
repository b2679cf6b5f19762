// The one writer of change files (contract §9): the header, then upsert and delete lines as they come, to a
// temporary file beside the path that is checked and then renamed into place, so a watched changes
// directory never holds half a change file. `explore-replica diff` writes with it.
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { mkdir, rename, rm } from 'node:fs/promises'
import { finished } from 'node:stream/promises'
import { basename, dirname, extname, join, resolve } from 'node:path'

export interface ChangeFileHeader {
  id: string
  generatedAt: string | null
}

/** What a change file says of one item: every field of its new version, or that it goes. */
export type ChangeLine =
  | { op: 'upsert', language: string, item: Record<string, unknown> }
  | { op: 'delete', language: string, pk: number }

export interface WrittenChanges {
  path: string
  bytes: number
  upserts: number
  deletes: number
}

/** An item a change file cannot carry: nothing is written. */
export class ChangeFileError extends Error {}

// About 256 KB a write, as the snapshot writer does.
const BATCH_CHARS = 1 << 18

/**
 * Writes the header, then every line `lines` hands to `emit` (awaited: the file's backpressure), then runs
 * `check` on the complete temporary file; only then is it renamed over `path`. On any failure the
 * temporary file is removed and `path` left as it was.
 */
export async function writeChangeFile (
  path: string,
  header: ChangeFileHeader,
  lines: (emit: (line: ChangeLine) => Promise<void>) => Promise<void>,
  { check }: { check?: (temporary: string) => Promise<void> } = {}
): Promise<WrittenChanges> {
  const target = resolve(path)
  await mkdir(dirname(target), { recursive: true })
  const extension = extname(target)
  // Hidden and this process's own; the extension kept, so a check reads it as the target will be read.
  const temporary = join(dirname(target), `.${basename(target, extension)}.${process.pid}.tmp${extension}`)
  const out = createWriteStream(temporary, { encoding: 'utf8', flush: true })
  const failed = new Promise<never>((_resolve, reject) => { out.once('error', reject) })
  failed.catch(() => {})
  const written: WrittenChanges = { path: target, bytes: 0, upserts: 0, deletes: 0 }
  let pending = ''
  const flush = async (): Promise<void> => {
    if (pending === '') return
    const chunk = pending
    pending = ''
    written.bytes += Buffer.byteLength(chunk, 'utf8')
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed])
  }
  const put = async (line: string): Promise<void> => {
    pending += `${line}\n`
    if (pending.length >= BATCH_CHARS) await flush()
  }
  try {
    await put(JSON.stringify({ changes: 'explore', version: 1, id: header.id, ...(header.generatedAt === null ? {} : { generated_at: header.generatedAt }) }))
    await lines(async line => {
      if (line.op === 'delete') {
        written.deletes++
        await put(JSON.stringify({ op: 'delete', language: line.language, pk: line.pk }))
      } else {
        // A change line reads these two as its own: an item carrying them cannot be written as one.
        if (Object.hasOwn(line.item, 'op')) throw new ChangeFileError(`${line.language} item ${String(line.item.pk)} has a field "op", which a change file reads as the line's operation`)
        if (line.item.language !== undefined && line.item.language !== line.language) {
          throw new ChangeFileError(`${line.language} item ${String(line.item.pk)} has a field "language" (${JSON.stringify(line.item.language)}), which a change file reads as the item's language`)
        }
        written.upserts++
        // `op` and `language` first, so a person reading the file sees what each line does.
        await put(JSON.stringify({ op: 'upsert', language: line.language, ...line.item }))
      }
    })
    await flush()
    out.end()
    await Promise.race([finished(out), failed])
    if (check !== undefined) await check(temporary)
    await rename(temporary, target)
  } catch (error) {
    out.destroy()
    if (!out.closed) await once(out, 'close').catch(() => {})
    await rm(temporary, { force: true }).catch(() => {})
    throw error
  }
  return written
}
