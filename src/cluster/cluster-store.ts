// WORKERS > 1 with SNAPSHOT_URL: the primary follows the source once (follow-source.ts) and this is the
// store it hands each download to. It holds no snapshot: it tells every worker to load the file and
// answers with what they did, 'loaded' only when every worker loaded it.
import { stat } from 'node:fs/promises'
import type { ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { FollowedStore } from '../sources/follow-source.js'

export interface ClusterWorkers {
  /** Asks every live worker to load `file`; resolves with each one's outcome and problems. */
  reloadAll: (file: string) => Promise<Array<{ outcome: string, problems: string[] }>>
  /** Whether any worker serves a snapshot. */
  serving: () => boolean
}

export class ClusterStore implements FollowedStore {
  private lastFailure: { problems: readonly string[] } | null = null

  /** `first`: what the first load serves instead of the cached copy (a pinned version's kept file). */
  constructor (readonly file: string, private readonly workers: ClusterWorkers, private readonly first: () => string = () => file) {}

  async start (): Promise<void> {
    // Only a copy that exists is worth telling the workers about.
    await stat(this.file)
    if (await this.reload(this.first()) !== 'loaded') throw new Error(this.lastFailure?.problems.join('; ') ?? 'the cached copy did not load')
  }

  current (): true | null {
    return this.workers.serving() ? true : null
  }

  async reload (file: string): Promise<ReloadOutcome> {
    const outcomes = await this.workers.reloadAll(file)
    const failed = outcomes.find(answer => answer.outcome !== 'loaded')
    if (outcomes.length > 0 && failed === undefined) return 'loaded'
    this.lastFailure = { problems: failed?.problems ?? ['no worker is running'] }
    return 'failed'
  }

  status (): { lastFailure: { problems: readonly string[] } | null } {
    return { lastFailure: this.lastFailure }
  }
}
