// The one way a snapshot file is read: in order, in chunks, into memory the caller gives, digested as read.
import { createHash, type Hash } from 'node:crypto'
import { open, type FileHandle } from 'node:fs/promises'

/** Bytes read at a time where the reader chooses: a few thousand items. */
export const READ_CHUNK = 1024 * 1024

export class FileChunks {
  private readonly hash: Hash = createHash('sha1')

  private constructor (private readonly handle: FileHandle, readonly size: number) {}

  /** Opens `file`; rejects with the file system's error (ENOENT, EACCES, EISDIR…). */
  static async open (file: string): Promise<FileChunks> {
    const handle = await open(file, 'r')
    try {
      const stats = await handle.stat()
      if (stats.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' })
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
