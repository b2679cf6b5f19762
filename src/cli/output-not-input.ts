// The tools' one rule for --out: never an input, which the rename over --out would destroy (an editor's change
// file, once). Links count: by resolved path, or where both exist, by device and inode.
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { UsageError } from '../errors.js'

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
