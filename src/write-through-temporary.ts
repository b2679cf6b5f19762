// Writes a file others read whole (snapshots, change files, the pin, a manifest, a follower's cache) through a
// temporary file renamed over it once flushed: a reader sees the old file or the new one, never half of either.
import { createWriteStream } from 'node:fs'
import { realpath, rename, rm, stat } from 'node:fs/promises'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import { basename, dirname, extname, join, resolve } from 'node:path'
import { makeDirectory } from './make-directory.js'

export interface WrittenFile {
  /** The file replaced (symbolic links followed). */
  path: string
  bytes: number
}

export interface TemporaryFileOptions {
  /**
   * Runs on the complete temporary file before the rename; throwing leaves the target untouched. Without
   * one, a target that is a device or a pipe (/dev/stdout) is written directly.
   */
  check?: (temporary: string) => Promise<void>
  /** Aborting stops the writing; the temporary file is removed and the target left as it was. */
  signal?: AbortSignal
}

// Batching small pieces into ~256 KB writes keeps the per-write overhead negligible.
const BATCH_CHARS = 1 << 18

/**
 * Writes what `produce` emits to `path` through a temporary file beside it, with the target's extension so it loads
 * as the target will; `check` runs on it whole before the rename. On failure it is removed, the error rethrown.
 * A symbolic link is followed (the link stays); a target that is not a regular file is written directly.
 */
export async function writeThroughTemporary (
  path: string,
  produce: (emit: (piece: string) => Promise<void>) => Promise<void>,
  { check, signal }: TemporaryFileOptions = {}
): Promise<WrittenFile> {
  let target = resolve(path)
  let direct = false
  try {
    target = await realpath(target)
    direct = !(await stat(target)).isFile()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    await makeDirectory(dirname(target))
  }
  if (direct && check !== undefined) throw new Error(`${path} is not a regular file`)
  const extension = extname(target)
  const temporary = direct
    ? target
    : join(dirname(target), `.${basename(target, extension)}.${process.pid}.tmp${extension}`)

  // Flushed to the disk before it closes, so before the rename: after a power cut the target is the old
  // file or the whole new one, never a renamed but empty file.
  const out = createWriteStream(temporary, { encoding: 'utf8', flush: !direct })
  const failed = new Promise<never>((_resolve, reject) => { out.once('error', reject) })
  failed.catch(() => {})
  let bytes = 0
  let pending: string[] = []
  let pendingLength = 0
  const flush = async (): Promise<void> => {
    signal?.throwIfAborted()
    if (pending.length === 0) return
    const chunk = pending.join('')
    pending = []
    pendingLength = 0
    bytes += Buffer.byteLength(chunk, 'utf8')
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed])
  }
  const emit = async (piece: string): Promise<void> => {
    pending.push(piece)
    pendingLength += piece.length
    if (pendingLength >= BATCH_CHARS) await flush()
  }

  try {
    await produce(emit)
    await flush()
    out.end()
    await Promise.race([finished(out), failed])
    if (check !== undefined) await check(temporary)
    signal?.throwIfAborted()
    if (!direct) await rename(temporary, target)
  } catch (error) {
    // A stream destroyed before its file is open still creates the file once the open completes: wait
    // for it to close before removing the file, or the removal comes first and the file stays.
    out.destroy()
    if (!out.closed) await once(out, 'close').catch(() => {})
    // Cleanup must not mask the error that matters.
    if (!direct) await rm(temporary, { force: true }).catch(() => {})
    throw error
  }
  return { path: target, bytes }
}

/** Whether process `pid` still runs: its temporary files (named by pid) are then not a crash's leftovers. */
export function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
