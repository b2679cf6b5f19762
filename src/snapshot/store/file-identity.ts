// Whether a file is the one seen before: its stamp (cheap, may say unchanged of other bytes) and its digest.
import { stat } from 'node:fs/promises'
import { DIGEST_BEHIND_FROM_BYTES, DigestBehind } from '../../sources/digest-behind.js'
import { FileChunks, VERSION_DIGEST, type LinkRule } from '../load/read-chunks.js'

/**
 * As a load computes it (a snapshot's version; a change set's digest). A large file's on a thread of its own: hashed
 * on the event loop, a 1.4 GB snapshot's pieces held the pages back for seconds after a restart from its image.
 * `background`: that thread below the ones that answer requests, stopped when it is aborted.
 */
export async function fileDigest (file: string, links: LinkRule = 'follow', background?: AbortSignal): Promise<string> {
  const chunks = await FileChunks.open(file, links)
  try {
    if (chunks.size >= DIGEST_BEHIND_FROM_BYTES) return await digestBehind(file, chunks, background)
    const buffer = Buffer.allocUnsafe(1024 * 1024)
    while (await chunks.readInto(buffer, 0, buffer.length) > 0) background?.throwIfAborted()
    return chunks.digest()
  } finally {
    await chunks.close()
  }
}

/** The file `chunks` opened and checked, read by its descriptor: no path is opened again. */
async function digestBehind (file: string, chunks: FileChunks, background?: AbortSignal): Promise<string> {
  background?.throwIfAborted()
  const thread = new DigestBehind({
    file, fd: chunks.fd, algorithm: VERSION_DIGEST, encoding: 'base64url', lowPriority: background !== undefined
  })
  const stop = (): void => { thread.stop().catch(() => {}) }
  background?.addEventListener('abort', stop, { once: true })
  try {
    return await thread.end(chunks.size)
  } finally {
    background?.removeEventListener('abort', stop)
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
