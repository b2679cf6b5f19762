// The one way a snapshot file is read: in order, in chunks, into memory the caller gives, digested as read.
import { createHash, type Hash } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises'
import { dirname, isAbsolute, relative, sep } from 'node:path'

/** A few thousand items. */
export const READ_CHUNK = 1024 * 1024
/** The longest line (JSON Lines) or item (v1) a load holds whole: an item is a few KB; longer is a JSON document
 * named as JSON Lines, or worse. */
export const MAX_ITEM_BYTES = 64 * 1024 * 1024

/** A limit as a person reads it: `64 MiB`, or `100 bytes` under a MiB (tests). */
export function bytesText (bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`
}

/** Also where a download digests them. */
export const VERSION_DIGEST = 'sha1'

/**
 * `follow`: the operator's own path (SNAPSHOT_PATH, a command's argument). `within-directory`: a change file, which
 * anyone who may write the changes directory puts there: a regular file, or a link that resolves inside that same
 * directory (a Kubernetes ConfigMap's `..data/`), never a link out (ADR 040).
 */
export type LinkRule = 'follow' | 'within-directory'

// Else a named pipe waits for a writer for ever, holding every later reload and the exit.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK

export class FileChunks {
  private readonly hash: Hash = createHash(VERSION_DIGEST)

  private constructor (private readonly handle: FileHandle, readonly size: number) {}

  /** Rejects with the file system's error or one of `failure`'s; describeReadError says each to an editor. */
  static async open (file: string, links: LinkRule = 'follow'): Promise<FileChunks> {
    let handle: FileHandle
    try {
      handle = links === 'follow' ? await open(file, READ_FLAGS) : await openWithinDirectory(file)
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
      throw missing && (await lstat(file).catch(() => null))?.isSymbolicLink() === true ? failure('EDANGLING') : error
    }
    try {
      const stats = await handle.stat()
      if (!stats.isFile()) throw failure(stats.isDirectory() ? 'EISDIR' : stats.isFIFO() ? 'EFIFO' : 'ENOTREG')
      return new FileChunks(handle, stats.size)
    } catch (error) {
      await handle.close().catch(() => {})
      throw error
    }
  }

  /** For a digest thread, which reads it and leaves it open. */
  get fd (): number {
    return this.handle.fd
  }

  /** 0 at the end of the file. */
  async readInto (buffer: Buffer, at: number, length: number): Promise<number> {
    const { bytesRead } = await this.handle.read(buffer, at, length, null)
    if (bytesRead > 0) this.hash.update(buffer.subarray(at, at + bytesRead))
    return bytesRead
  }

  /** The snapshot's version. */
  digest (): string {
    return this.hash.digest('base64url')
  }

  async close (): Promise<void> {
    await this.handle.close().catch(() => {})
  }
}

/** Nothing of a link's target is read unless it is inside the link's own directory. */
async function openWithinDirectory (file: string): Promise<FileHandle> {
  try {
    return await open(file, READ_FLAGS | constants.O_NOFOLLOW)
  } catch (error) {
    // O_NOFOLLOW on a link: ELOOP (Linux, macOS), EMLINK (FreeBSD).
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ELOOP' && code !== 'EMLINK') throw error
    if ((await lstat(file).catch(() => null))?.isSymbolicLink() !== true) throw error
  }
  const dir = await realpath(dirname(file))
  let target: string
  try {
    target = await realpath(file)
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'ENOENT' ? failure('EDANGLING') : error
  }
  if (!isInside(target, dir)) throw failure('ELINKOUT')
  const handle = await open(target, READ_FLAGS | constants.O_NOFOLLOW)
  // A directory on the way swapped for a link since realpath would lead out: judged by what was opened (Linux).
  const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null)
  if (opened !== null && !isInside(opened, dir)) {
    await handle.close().catch(() => {})
    throw failure('ELINKOUT')
  }
  return handle
}

function isInside (path: string, dir: string): boolean {
  const below = relative(dir, path)
  // `..data/…` is inside: only `..` itself as the first step leads out.
  return below !== '' && below !== '..' && !below.startsWith(`..${sep}`) && !isAbsolute(below)
}

/** Each chunk valid until the next is asked for. */
export async function * chunksOf (file: string, chunkBytes: number): AsyncGenerator<Buffer> {
  const chunks = await FileChunks.open(file)
  const buffer = Buffer.allocUnsafe(chunkBytes)
  try {
    for (;;) {
      const read = await chunks.readInto(buffer, 0, chunkBytes)
      if (read === 0) return
      yield buffer.subarray(0, read)
    }
  } finally {
    await chunks.close()
  }
}

/** Coded as the file system's errors are. */
function failure (code: 'EISDIR' | 'EFIFO' | 'ENOTREG' | 'EDANGLING' | 'ELINKOUT'): Error {
  const message = code === 'EDANGLING' ? 'a link to nothing' : code === 'ELINKOUT' ? 'a link out of its directory' : 'not a regular file'
  return Object.assign(new Error(message), { code })
}
