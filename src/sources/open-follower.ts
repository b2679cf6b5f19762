// SNAPSHOT_URL's follower and its store's file: a name ending in manifest.json is a fleet's manifest
// (follow-manifest.ts), any other object a snapshot (follow-source.ts).
import { isManifestName } from '../schemas/manifest.js'
import type { ChainServer } from '../snapshot/store/snapshot-store.js'
import { cachedManifestPath, ManifestFollower } from './follow-manifest.js'
import { cachedCopyPath, SourceFollower, type FollowOptions } from './follow-source.js'
import type { RemoteSource } from './remote-source.js'

function followsManifest (source: RemoteSource): boolean {
  return isManifestName(new URL(source.shown).pathname)
}

/** The store's own file: the cached copy of a snapshot, or the cached manifest. */
export function followedFile (source: RemoteSource, cacheDir: string): string {
  return followsManifest(source) ? cachedManifestPath(source, cacheDir) : cachedCopyPath(source, cacheDir)
}

export function followerFor (source: RemoteSource, store: ChainServer, options: FollowOptions): SourceFollower {
  return followsManifest(source)
    ? new ManifestFollower(source, store, options)
    : new SourceFollower(source, store, options)
}
