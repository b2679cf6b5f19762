// The tools' one rule for --out: never a file they read. A tool writes its result through a temporary file
// renamed over --out, so an --out that is an input destroys it (an editor's change file, once).
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { UsageError } from '../errors.js'

/**
 * Throws a UsageError when `out` names one of the inputs (`[what, file]`): by resolved path, or where both exist
 * by device and inode, since a symbolic or hard link to an input is as surely a mistake.
 */
export async function refuseInputAsOut (out: string, inputs: Array<[string, string]>): Promise<void> {
  const target = await stat(out, { bigint: true }).catch(() => null)
  for (const [what, file] of inputs) {
    const input = target === null ? null : await stat(file, { bigint: true }).catch(() => null)
    const same = resolve(out) === resolve(file) ||
      (input !== null && target !== null && input.dev === target.dev && input.ino === target.ino)
    if (same) {
      throw new UsageError(`--out ${out} is ${what} ${file}: it would be overwritten; write the result to another file`)
    }
  }
}
