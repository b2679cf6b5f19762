// Writes through a temporary file renamed once flushed: a reader sees the old file or the new one, never half.
import { createWriteStream } from 'node:fs'
import { readdir, realpath, rename, rm, stat } from 'node:fs/promises'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import { basename, dirname, extname, join, resolve } from 'node:path'
import { makeDirectory } from './make-directory.js'
import { OWNER_DIRECTORY, OWNER_FILE } from './owner-only.js'

export interface WrittenFile {
  /** Symbolic links followed. */
  path: string
  bytes: number
}

export interface TemporaryFileOptions {
  /** Throwing leaves the target untouched; without one, a device or pipe (/dev/stdout) is written directly. */
  check?: (temporary: string) => Promise<void>
  signal?: AbortSignal
  /** The service's own state: the file 0600 and any directory made 0700 (ADR 040); else the umask's modes. */
  ownerOnly?: boolean
}

// Batching small pieces into ~256 KB writes keeps the per-write overhead negligible.
const BATCH_CHARS = 1 << 18

/** The temporary file has the target's extension, so it loads as the target will. */
export async function writeThroughTemporary (
  path: string,
  produce: (emit: (piece: string) => Promise<void>) => Promise<void>,
  { check, signal, ownerOnly = false }: TemporaryFileOptions = {}
): Promise<WrittenFile> {
  let target = resolve(path)
  let direct = false
  try {
    target = await realpath(target)
    direct = !(await stat(target)).isFile()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    await makeDirectory(dirname(target), ownerOnly ? OWNER_DIRECTORY : undefined)
  }
  if (direct && check !== undefined) throw new Error(`${path} is not a regular file`)
  const extension = extname(target)
  const temporary = direct
    ? target
    : join(dirname(target), `.${basename(target, extension)}.${process.pid}.tmp${extension}`)

  // Flushed before the rename: after a power cut, never a renamed but empty file.
  const out = createWriteStream(temporary, { encoding: 'utf8', flush: !direct, mode: ownerOnly ? OWNER_FILE : 0o666 })
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
    // One destroyed before its file is open still creates it: waited for, or the removal comes first.
    out.destroy()
    if (!out.closed) await once(out, 'close').catch(() => {})
    // Cleanup must not mask the error that matters.
    if (!direct) await rm(temporary, { force: true }).catch(() => {})
    throw error
  }
  return { path: target, bytes }
}

/** A stopped process's downloads in `dir`, whose names `pidOf` reads the pid from: a live one's may be under way. */
export async function sweepDeadDownloads (dir: string, pidOf: (entry: string) => string | undefined): Promise<void> {
  for (const entry of await readdir(dir)) {
    const pid = pidOf(entry)
    if (pid !== undefined && !isAlive(Number(pid))) await rm(join(dir, entry), { force: true })
  }
}

/** Its temporary files (named by pid) are then not a crash's leftovers. */
export function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
