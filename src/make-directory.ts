// `mkdir -p` a level at a time: Node 20/24's recursive mkdir retries ENOENT under /proc for ever, and exit waits.
import { mkdir, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

/** `mode`: of each level made (the umask may take bits away); one that exists keeps its own. */
export async function makeDirectory (dir: string, mode = 0o777): Promise<void> {
  try {
    await mkdir(dir, mode)
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      if ((await stat(dir)).isDirectory()) return
      throw error
    }
    if (code !== 'ENOENT' || dirname(dir) === dir) throw error
  }
  await makeDirectory(dirname(dir), mode)
  try {
    await mkdir(dir, mode)
  } catch (error) {
    // Made meanwhile by another process sharing the directory.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}
