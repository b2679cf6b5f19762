// An editor's chain on disk: a directory's change files in name order, and the digest a load computes.
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { setImmediate as turn } from 'node:timers/promises'
import { FileChunks, type LinkRule } from '../load/read-chunks.js'

/** Not hidden: editors' swap and lock files start with a dot. */
export function isChangeFileName (name: string): boolean {
  return name.endsWith('.jsonl') && !name.startsWith('.')
}

/** In code unit order (the same on every machine); none when `dir` is missing. */
export async function changeFilesIn (dir: string): Promise<string[]> {
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' ||
      (error as NodeJS.ErrnoException).code === 'ENOTDIR') return []
    throw error
  }
  return entries
    .filter(entry => !entry.isDirectory() && isChangeFileName(entry.name))
    .map(entry => entry.name)
    .sort((a, b) => a < b ? -1 : a > b ? 1 : 0)
    .map(name => join(dir, name))
}

/**
 * As a load computes it (a snapshot's version; a change set's digest). `background`: a turn of the event loop between
 * pieces, requests first, until it is aborted.
 */
export async function fileDigest (file: string, links: LinkRule = 'follow', background?: AbortSignal): Promise<string> {
  const chunks = await FileChunks.open(file, links)
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024)
    while (await chunks.readInto(buffer, 0, buffer.length) > 0) {
      if (background === undefined) continue
      background.throwIfAborted()
      await turn()
    }
    return chunks.digest()
  } finally {
    await chunks.close()
  }
}

/** Null when it cannot be read. */
export async function fileStamp (file: string): Promise<string | null> {
  try {
    const s = await stat(file, { bigint: true })
    // A pipe or a device has no versions to tell apart.
    if (!s.isFile()) return 'not a regular file'
    // Not the ctime: hard-linking a kept download changes it (ADR 025).
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`
  } catch {
    return null
  }
}
