// The service's own files (STATE_DIR, its downloads in SNAPSHOT_CACHE_DIR) are its user's alone, whatever the umask
// (ADR 040); what the command line writes for its user (--out, publish --to) keeps the umask's modes.
import { chmod, lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'

export const OWNER_FILE = 0o600
export const OWNER_DIRECTORY = 0o700

/**
 * At start, what an older release wrote with the umask's modes loses group and others' bits: `paths` and, for a
 * directory, everything below it. Links are never followed; what is missing or not the user's is passed over.
 */
export async function tightenOwnFiles (
  paths: readonly string[], log: { info: (fields: object, message: string) => void }
): Promise<void> {
  let tightened = 0
  const tighten = async (path: string): Promise<void> => {
    const info = await lstat(path).catch(() => null)
    if (info === null || info.isSymbolicLink()) return
    if ((info.mode & 0o077) !== 0) {
      if (await chmod(path, info.mode & 0o700).then(() => true, () => false)) tightened++
    }
    if (!info.isDirectory()) return
    for (const entry of await readdir(path).catch(() => [])) await tighten(join(path, entry))
  }
  for (const path of paths) await tighten(path)
  if (tightened > 0) log.info({ paths, tightened }, 'files an older release left readable by others made owner-only')
}
