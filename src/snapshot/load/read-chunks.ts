// The one way a snapshot file is read: in order, in chunks, into memory the caller gives, digested as read.
import { createHash, type Hash } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, open, type FileHandle } from 'node:fs/promises'

/** Bytes read at a time where the reader chooses: a few thousand items. */
export const READ_CHUNK = 1024 * 1024

/** The hash of a snapshot's bytes that is its version (in base64url): here, and where a download digests them. */
export const VERSION_DIGEST = 'sha1'

export class FileChunks {
  private readonly hash: Hash = createHash(VERSION_DIGEST)

  private constructor (private readonly handle: FileHandle, readonly size: number) {}

  /**
   * Opens `file`, a regular file; rejects with the file system's error (ENOENT, EACCES, ELOOP…), or EISDIR,
   * EFIFO, ENOTREG or EDANGLING (a link to nothing): describeReadError says each to an editor.
   */
  static async open (file: string): Promise<FileChunks> {
    let handle: FileHandle
    try {
      // Non-blocking: a named pipe opens at once and is refused below, where a plain open would wait for a
      // writer for ever, holding every later reload and the exit. A regular file reads as ever.
      handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK)
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

  /** Reads the next bytes into `buffer` from `at`, at most `length`; 0 at the end of the file. */
  async readInto (buffer: Buffer, at: number, length: number): Promise<number> {
    const { bytesRead } = await this.handle.read(buffer, at, length, null)
    if (bytesRead > 0) this.hash.update(buffer.subarray(at, at + bytesRead))
    return bytesRead
  }

  /** The digest of every byte read: the snapshot's version. */
  digest (): string {
    return this.hash.digest('base64url')
  }

  async close (): Promise<void> {
    await this.handle.close().catch(() => {})
  }
}

/** Every chunk of `file` in order, each valid until the next is asked for (one buffer, reused). */
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

/** An error of ours with a code as the file system's are: not a regular file, or a link to nothing. */
function failure (code: 'EISDIR' | 'EFIFO' | 'ENOTREG' | 'EDANGLING'): Error {
  return Object.assign(new Error(code === 'EDANGLING' ? 'a link to nothing' : 'not a regular file'), { code })
}
