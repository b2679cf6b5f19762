// A full cache disk under SNAPSHOT_URL: a real 256 KiB tmpfs (mounted as root), so that a download fails
// for want of room; the last good snapshot stays served.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeItem, tempDir } from '../helpers.js'
import { followingApp, publisher, servedVersion, sourceStatus } from './http-publisher.js'

/** Mounts a 256 KiB tmpfs on `dir`: a disk that fills at once. Needs root (and a kernel that allows it). */
function mountSmallDisk (dir: string): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]).status === 0
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
