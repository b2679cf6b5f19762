// A full cache disk under SNAPSHOT_URL: a real small tmpfs (mounted as root), so that a download fails for want
// of room; the last good snapshot stays served, and a fleet's image with no room for its snapshot too serves.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { readdir, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeImageFile } from '../../src/cli/publish-command.js'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { makeItem, tempDir, toJsonLines } from '../helpers.js'
import { serveDirectory } from './counting-servers.js'
import { followingApp, publisher, servedVersion, sourceStatus } from './http-publisher.js'
import type { ManifestFollower } from '../../src/sources/follow-manifest.js'

/** Mounts a 256 KiB tmpfs on `dir`: a disk that fills at once. Needs root (and a kernel that allows it). */
function mountSmallDisk (dir: string, size = '256k'): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0
}
const probe = mkdtempSync(join(tmpdir(), 'explore-probe-'))
const canMount = mountSmallDisk(probe)
if (canMount) spawnSync('umount', [probe])
rmSync(probe, { recursive: true, force: true })

t.test('a full cache disk: the download is dropped with a clear status entry, and the last good snapshot stays', {
  skip: canMount ? false : 'mounting a small tmpfs needs root: a full cache disk is not tested here'
}, async t => {
  const dir = await tempDir(t)
  t.ok(mountSmallDisk(dir), 'a 256 KiB disk as the cache directory')
  t.teardown(() => { spawnSync('umount', ['-l', dir]) })
  const site = await publisher(t)
  const app = await followingApp(t, site.url, dir)
  await app.snapshotSource!.checkNow()
  t.equal(await servedVersion(app), 1)
  // Larger than what is left of the disk.
  site.publish({ languages: { en: Array.from({ length: 400 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_title: `v9 item ${i + 1}`, translated_abstract: 'x'.repeat(1000) })) } })
  await app.snapshotSource!.checkNow()
  t.match((await sourceStatus(app)).lastError, { message: 'the cache disk is full (SNAPSHOT_CACHE_DIR): the download was dropped' })
  t.equal(await servedVersion(app), 1, 'still serving the last good snapshot')
  t.same((await readdir(dir)).filter(name => name.includes('.download-')), [], 'no partial download left behind')
})

t.test('a disk with room for a fleet\'s image but not its snapshot too: the replica joins from the image and keeps serving it; the version is not kept', {
  skip: canMount ? false : 'mounting a small tmpfs needs root: a full cache disk is not tested here'
}, async t => {
  const published = await tempDir(t)
  const doc = { languages: { en: Array.from({ length: 300 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_title: `v1 item ${i + 1}`, translated_abstract: 'x'.repeat(1000) })) } }
  await writeFile(join(published, 'snap-1.jsonl'), toJsonLines(doc))
  const model = await loadSnapshotFile(join(published, 'snap-1.jsonl'))
  const { image } = await writeImageFile(model, published)
  model.memory.retire()
  await writeFile(join(published, 'manifest.json'), JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-1.jsonl', changes: [], image }))
  const snapshotBytes = (await stat(join(published, 'snap-1.jsonl'))).size
  const site = await serveDirectory(t, published)
  const dir = await tempDir(t)
  // The image, and half the snapshot.
  t.ok(mountSmallDisk(dir, `${Math.ceil((image.bytes + snapshotBytes / 2) / 4096) * 4}k`), 'a disk for the image and half the snapshot')
  t.teardown(() => { spawnSync('umount', ['-l', dir]) })
  const app = await followingApp(t, `${site.origin}/manifest.json`, dir, { stateDir: join(dir, 'state') })
  const follower = app.snapshotSource as ManifestFollower
  await follower.checkNow()
  // The snapshot's download behind the join, which the full disk ends.
  await follower.settled()
  t.equal(await servedVersion(app), 1, 'served from the image')
  t.equal((await sourceStatus(app)).lastError, null, 'the manifest is not refused: the image serves')
  t.same(app.snapshotVersions.state().kept, [], 'the version is not kept: its snapshot is not here')
  t.same((await readdir(join(dir, 'state', 'images'))).filter(name => name.endsWith('.image')), [`${image.snapshot}.image`], 'the image kept')
  site.reset()
  await follower.checkNow()
  await follower.settled()
  t.same([...site.bytes.keys()], [], 'not downloaded again and again: the disk is full until another manifest')
  await app.close()
  const restarted = await followingApp(t, `${site.origin}/manifest.json`, dir, { stateDir: join(dir, 'state') })
  await restarted.snapshotSource.start(restarted.snapshotVersions)
  t.equal(await servedVersion(restarted), 1, 'a restart serves the image it kept')
})
