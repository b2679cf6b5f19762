// `mkdir -p`, one level at a time. Node's recursive mkdir never returns for a path it cannot make under /proc
// (seen on Node 20 and 24: it retries ENOENT for ever, holding a thread of libuv's pool that exit then waits for).
import { mkdir, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

export async function makeDirectory (dir: string): Promise<void> {
  try {
    await mkdir(dir)
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      if ((await stat(dir)).isDirectory()) return
      throw error
    }
    if (code !== 'ENOENT' || dirname(dir) === dir) throw error
  }
  await makeDirectory(dirname(dir))
  try {
    await mkdir(dir)
  } catch (error) {
    // Made meanwhile by another process sharing the directory.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}
