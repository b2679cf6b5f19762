// SNAPSHOT_URL's follower and the file its store is named for: a fleet's manifest (its name ends in
// manifest.json) is followed by follow-manifest.ts, any other object by follow-source.ts.
// One choice, made here for a single process (plugins/snapshot.ts) and a cluster's primary alike.
import { isManifestName } from '../schemas/manifest.js'
import { cachedManifestPath, ManifestFollower, type ChainStore } from './follow-manifest.js'
import { cachedCopyPath, SourceFollower, type FollowOptions } from './follow-source.js'
import type { RemoteSource } from './remote-source.js'

function followsManifest (source: RemoteSource): boolean {
  return isManifestName(new URL(source.shown).pathname)
}

/** The store's own file: the cached copy of a snapshot, or the cached manifest. */
export function followedFile (source: RemoteSource, cacheDir: string): string {
  return followsManifest(source) ? cachedManifestPath(source, cacheDir) : cachedCopyPath(source, cacheDir)
}

export function followerFor (source: RemoteSource, store: ChainStore, options: FollowOptions): SourceFollower {
  return followsManifest(source) ? new ManifestFollower(source, store, options) : new SourceFollower(source, store, options)
}
