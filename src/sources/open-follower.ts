// SNAPSHOT_URL's follower: a name ending in manifest.json is a fleet's manifest, any other a snapshot.
import { isManifestName } from '../schemas/manifest.js'
import type { ChainServer } from '../snapshot/store/snapshot-store.js'
import { cachedManifestPath, ManifestFollower } from './follow-manifest.js'
import { cachedCopyPath, SourceFollower, type FollowOptions } from './follow-source.js'
import type { RemoteSource } from './remote-source.js'

function followsManifest (source: RemoteSource): boolean {
  return isManifestName(new URL(source.shown).pathname)
}

export function followedFile (source: RemoteSource, cacheDir: string): string {
  return followsManifest(source) ? cachedManifestPath(source, cacheDir) : cachedCopyPath(source, cacheDir)
}

export function followerFor (source: RemoteSource, store: ChainServer, options: FollowOptions): SourceFollower {
  return followsManifest(source)
    ? new ManifestFollower(source, store, options)
    : new SourceFollower(source, store, options)
}
