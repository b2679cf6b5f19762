// What every snapshot source is: it hands chains to one sink, which checks the pin in one place.
import type { Chain, ReloadOutcome } from '../snapshot/store/snapshot-store.js'
import type { Status } from '../schemas/operations.js'

export type FollowCause = { file: string } | { object: string, etag: string | null } | 'signal'

export interface ChainSink {
  /** A source then asks for nothing it would only notice again. */
  pinned: () => boolean
  /** The one pin check; what it holds back is noticed and logged. */
  holdBack: (cause: FollowCause) => boolean
  /** Resolves once kept: a download may then be renamed. With a cause, the pin is checked first (`holdBack`). */
  serve: {
    (chain: Chain): Promise<ReloadOutcome>
    (chain: Chain, heldBackBy: FollowCause): Promise<ReloadOutcome | 'held'>
  }
  /** Change files may come: the served snapshot is made ready for them before the first one does. */
  expectChanges: () => void
}

export type SourceStatusJson = NonNullable<Status['source']>

export interface ChainSource {
  readonly shown: string
  /**
   * Downloads are never written again, so a kept version may hard-link them (ADR 025); a URL's first snapshot is
   * waited for unready, where a file's refusal ends the start (serve.ts).
   */
  readonly remote: boolean
  start: (sink: ChainSink) => Promise<void>
  checkNow: () => Promise<void>
  reloadAsked: () => Promise<void>
  /** After an unpin. */
  resume: () => Promise<void>
  stop: () => Promise<void>
  status: () => SourceStatusJson | null
}
