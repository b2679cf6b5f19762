// file → ChangeSet by the snapshot's own pipeline; nothing of a bad file is applied.
import { SnapshotError, TooBigError } from '../../errors.js'
import { processLoader, type SnapshotLoader } from '../load/load-snapshot.js'
import type { LinkRule } from '../load/read-chunks.js'
import { ChangeSetBuilder, type ChangeSet } from './change-set.js'
import { ChangeFraming } from './frame-changes.js'

interface ReadChangesOptions {
  /** A large change file then leaves a core to the requests. */
  serving?: boolean
  /** Tests: a small batch, a report cap. */
  loader?: SnapshotLoader
  /** A replica's changes directory: `within-directory`. */
  links?: LinkRule
}

export async function readChangeFile (
  file: string, { serving = false, loader = processLoader, links = 'follow' }: ReadChangesOptions = {}
): Promise<ChangeSet> {
  const target = new ChangeSetBuilder()
  try {
    return await loader.read(file, target, parts => new ChangeFraming(parts, loader.maxItemBytes), serving,
      async (framing, digest) => {
        // A file with content always has its header judged: a valid file has an id.
        if (framing.id === null) throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, ['the header is missing'])
        return {
          source: file,
          id: framing.id,
          generatedAt: framing.generatedAt,
          digest,
          chunks: target.chunks,
          ops: target.ops
        }
      }, links)
  } catch (error) {
    // Said as what it was read as.
    if (error instanceof TooBigError && error.kind === 'snapshot') {
      throw new TooBigError(error.file, error.problems[0] as string, error.shortfall, 'change file')
    }
    if (error instanceof SnapshotError && error.kind === 'snapshot') {
      throw new SnapshotError(error.code, error.file, error.problems, 'change file')
    }
    throw error
  }
}
