// An editor's chain on disk: a directory's change files in name order, and the digest a load computes.
import { lstat, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { FileChunks } from '../load/read-chunks.js'

/** A change file's name: `*.jsonl`, not hidden (editors' swap and lock files start with a dot). */
export function isChangeFileName (name: string): boolean {
  return name.endsWith('.jsonl') && !name.startsWith('.')
}

/** The `*.jsonl` files of `dir` in code unit order (the same on every machine); none when it is missing. */
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
 * Why `file` cannot be a change file: a named pipe (opening one waits for a writer for ever, holding every
 * later reload and the exit), a socket, device, directory or dangling link. Null for a regular file, or one
 * missing or unreadable: the read says so.
 */
export async function notAChangeFile (file: string): Promise<string | null> {
  try {
    const info = await stat(file)
    if (info.isFile()) return null
    if (info.isDirectory()) return 'a directory, not a file'
    return info.isFIFO() ? 'a named pipe, not a file' : 'not a regular file (a socket or a device)'
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null
    // A link whose file is missing; not a file removed meanwhile, which changes nothing.
    return (await lstat(file).catch(() => null))?.isSymbolicLink() === true
      ? 'a link to a file that does not exist'
      : null
  }
}

/** The digest of `file`'s bytes, as a load computes it (a snapshot's version; a change set's digest). */
export async function fileDigest (file: string): Promise<string> {
  const chunks = await FileChunks.open(file)
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024)
    while (await chunks.readInto(buffer, 0, buffer.length) > 0);
    return chunks.digest()
  } finally {
    await chunks.close()
  }
}
