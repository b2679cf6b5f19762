// The one way a snapshot file is read: in order, in chunks, into memory the caller gives, digested as read.
import { createHash, type Hash } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, open, type FileHandle } from 'node:fs/promises'

/** A few thousand items. */
export const READ_CHUNK = 1024 * 1024

/** Also where a download digests them. */
export const VERSION_DIGEST = 'sha1'

export class FileChunks {
  private readonly hash: Hash = createHash(VERSION_DIGEST)

  private constructor (private readonly handle: FileHandle, readonly size: number) {}

  /** Rejects with the file system's error or one of `failure`'s; describeReadError says each to an editor. */
  static async open (file: string): Promise<FileChunks> {
    let handle: FileHandle
    try {
      // Else a named pipe waits for a writer for ever, holding every later reload and the exit.
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
function failure (code: 'EISDIR' | 'EFIFO' | 'ENOTREG' | 'EDANGLING'): Error {
  return Object.assign(new Error(code === 'EDANGLING' ? 'a link to nothing' : 'not a regular file'), { code })
}
