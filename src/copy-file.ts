// A copy that ends: libuv's copyfile sends the size it first saw and spins for ever on a source that shrinks meanwhile
// (an editor saving in place), holding a pool thread at 100% CPU and the process's exit (Node 20 and 24).
import { createReadStream, createWriteStream } from 'node:fs'
import { constants, copyFile } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'

/** A clone where the file system makes them (one call in the kernel), else the bytes read up to the source's end. */
export async function copyToEnd (from: string, to: string): Promise<void> {
  try {
    await copyFile(from, to, constants.COPYFILE_FICLONE_FORCE)
    return
  } catch {
    // No reflinks here (ext4, tmpfs, another device): read and written.
  }
  await pipeline(
    createReadStream(from, { highWaterMark: PIECE_BYTES }),
    createWriteStream(to, { highWaterMark: PIECE_BYTES })
  )
}

const PIECE_BYTES = 1024 * 1024
