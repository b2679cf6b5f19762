// Every snapshot source (a watched file, an HTTP or S3 object, a fleet's manifest) yields chains; each hands them
// to one sink, the operator's versions, which checks the pin and serves them through the store's one door.
import type { Chain, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { Status } from '../schemas/operations.js'

/** What makes a source want to serve now: a file's event, a newer object, or SIGHUP. */
export type FollowCause = { file: string } | { object: string, etag: string | null } | 'signal'

/** Where a source hands its chains. */
export interface ChainSink {
  /** Whether a version is pinned: a source then asks for nothing it would only notice again. */
  pinned: () => boolean
  /** The one pin check: true when the pin holds back what would load now (it is then noticed, and logged). */
  holdBack: (cause: FollowCause) => boolean
  /** Serves `chain`; resolves once what was served is kept (a download may then be renamed). */
  serve: (chain: Chain) => Promise<ReloadOutcome>
}

/** A source followed, as /-/status shows it; null for a file. */
export type SourceStatusJson = NonNullable<Status['source']>

export interface ChainSource {
  /** As the versions page shows it: the snapshot's path, or SNAPSHOT_URL. */
  readonly shown: string
  /**
   * A remote source: its files are downloads never written again (a kept version may hard-link them, ADR 025),
   * and its first snapshot is waited for, unready, where a file's refusal ends the start.
   */
  readonly remote: boolean
  /** Begins following, handing chains to `sink`; resolves once the source is watched or what it holds is served. */
  start: (sink: ChainSink) => Promise<void>
  /** Looks at the source now, or joins the look under way; resolves when it has ended (tests, the bench). */
  checkNow: () => Promise<void>
  /** SIGHUP: the file served again (unless pinned), or a check of the source begun after the signal. */
  reloadAsked: () => Promise<void>
  /** After an unpin: serves what the source holds again, then looks for anything newer. */
  resume: () => Promise<void>
  stop: () => Promise<void>
  status: () => SourceStatusJson | null
}
