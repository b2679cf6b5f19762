// WORKERS > 1 with SNAPSHOT_URL: the primary follows the source once (follow-source.ts, follow-manifest.ts)
// and this is the store it hands each download to. It holds no snapshot: it tells every worker to load the
// file (or serve the manifest's chain) and answers with what they did, 'loaded' only when every worker did.
import { stat } from 'node:fs/promises'
import type { Chain, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { ChainStore } from '../sources/follow-manifest.js'
import type { ToWorker } from './messages.js'

/** One worker's answer to a load it was asked for. */
export interface WorkerAnswer { outcome: string, problems: string[] }

/** Whether the workers asked all loaded it: at least one was asked, and none failed. */
export function allLoaded (answers: readonly WorkerAnswer[]): boolean {
  return answers.length > 0 && answers.every(answer => answer.outcome === 'loaded')
}

export interface ClusterWorkers {
  /** Asks every live worker to load `file` or serve a chain; resolves with each one's answer. */
  askAll: (ask: WorkerAsk) => Promise<WorkerAnswer[]>
  /** Whether any worker serves a snapshot. */
  serving: () => boolean
}

/** What every worker is asked to do. */
export type WorkerAsk = { explore: 'reload', file: string } | { explore: 'serve', chain: Chain }

/** What the workers are asked to serve `chain`: a snapshot alone is a reload of its file. */
export function askToServe (chain: Chain): WorkerAsk {
  return chain.changes.length === 0 ? { explore: 'reload', file: chain.snapshot } : { explore: 'serve', chain }
}

export class ClusterStore implements ChainStore {
  private lastFailure: { problems: readonly string[] } | null = null
  /** What every worker serves, for a worker started again: the last chain served, or the cached copy. */
  private lastGood: WorkerAsk

  /** `first`: what the first load serves instead of the cached copy (a pinned version's kept files). */
  constructor (readonly file: string, private readonly workers: ClusterWorkers, private readonly first: () => Chain | null) {
    this.lastGood = { explore: 'reload', file }
  }

  async start (): Promise<void> {
    const first = this.first() ?? { snapshot: this.file, changes: [] }
    // Only a copy that exists is worth telling the workers about.
    await stat(first.snapshot)
    if (await this.ask(askToServe(first)) !== 'loaded') throw new Error(this.lastFailure?.problems.join('; ') ?? 'the cached copy did not load')
  }

  current (): true | null {
    return this.workers.serving() ? true : null
  }

  async reload (file: string): Promise<ReloadOutcome> {
    return await this.ask({ explore: 'reload', file })
  }

  async serve (chain: Chain): Promise<ReloadOutcome> {
    return await this.ask({ explore: 'serve', chain })
  }

  /** What a worker started again is told, so that it serves what the others do. */
  catchUp (): ToWorker {
    return this.lastGood
  }

  private async ask (ask: WorkerAsk): Promise<ReloadOutcome> {
    const outcomes = await this.workers.askAll(ask)
    if (allLoaded(outcomes)) {
      // A download is renamed over the cached copy once loaded: the copy, not the download, is what lasts.
      if (ask.explore === 'serve') this.lastGood = ask
      return 'loaded'
    }
    this.lastFailure = { problems: outcomes.find(answer => answer.outcome !== 'loaded')?.problems ?? ['no worker is running'] }
    return 'failed'
  }

  status (): { lastFailure: { problems: readonly string[] } | null } {
    return { lastFailure: this.lastFailure }
  }
}
