// File modes under umask 0 (src/owner-only.ts): everything a replica writes in STATE_DIR and SNAPSHOT_CACHE_DIR is
// its user's alone, whatever the umask; what an older release left readable by others is tightened at the next
// start; what the command line writes for its user keeps the umask's modes.
import t, { type Test } from 'tap'
import { chmod, lstat, mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { DirectoryTarget } from '../src/cli/publish-to-directory.js'
import { writeImageFile } from '../src/cli/publish-command.js'
import { loadConfig, type Config } from '../src/config.js'
import { loadSnapshotFile } from '../src/snapshot/load/load-snapshot.js'
import { writeSnapshotFile } from '../src/snapshot/write-snapshot-file.js'
import { SecretUrl } from '../src/secret-url.js'
import type { ManifestFollower } from '../src/sources/follow-manifest.js'
import { makeItem, smallSnapshot, tempDir, toJsonLines, versioned } from './helpers.js'
import { serveDirectory } from './sources/counting-servers.js'

// Nothing the umask would take away: the modes seen are the ones the code asks for.
const umask = process.umask(0)
t.teardown(() => { process.umask(umask) })

/** Every path below `root` (and `root`) with its permission bits, links left out. */
async function modesBelow (root: string): Promise<Map<string, { mode: number, directory: boolean }>> {
  const modes = new Map<string, { mode: number, directory: boolean }>()
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path)
    if (info.isSymbolicLink()) return
    modes.set(path.slice(root.length) || '.', { mode: info.mode & 0o777, directory: info.isDirectory() })
    if (info.isDirectory()) for (const entry of await readdir(path)) await walk(join(path, entry))
  }
  await walk(root)
  return modes
}

function ownerOnly (t: Test, modes: Map<string, { mode: number, directory: boolean }>, what: string): void {
  const loose = [...modes].filter(([, { mode, directory }]) => mode !== (directory ? 0o700 : 0o600))
    .map(([path, { mode }]) => `${path} ${mode.toString(8)}`)
  t.same(loose, [], `${what}: every directory 0700, every file 0600`)
}

async function app (t: Test, overrides: Partial<Config>): Promise<FastifyInstance> {
  const built = await buildApp(loadConfig({ overrides: { logLevel: 'silent', watch: false, snapshotPollSeconds: 3600, ...overrides } }))
  t.teardown(() => built.close())
  return built
}

const changeText = (id: string, title: string): string =>
  `${JSON.stringify({ changes: 'explore', version: 1, id })}\n${JSON.stringify({ op: 'upsert', language: 'en', ...makeItem(1, '2024-01-01', [7], { translated_title: title }) })}\n`

t.test('under umask 0, an editor\'s replica keeps its versions, images and pin owner-only: directories 0700, files 0600', async t => {
  const root = await tempDir(t)
  const file = join(root, 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
  await mkdir(`${file}.changes`)
  await writeFile(join(`${file}.changes`, '0001.jsonl'), changeText('c1', 'changed'))
  const stateDir = join(root, 'not-yet', 'state')
  const editor = await app(t, { snapshotPath: file, stateDir })
  await editor.snapshots.start()
  await editor.snapshotVersions.kept.idle()
  await editor.snapshots.images!.idle()
  await writeFile(join(`${file}.changes`, '0002.jsonl'), changeText('c2', 'changed again'))
  await editor.snapshotSource.checkNow()
  await editor.snapshotVersions.rollback()
  await editor.snapshotVersions.kept.idle()
  const modes = await modesBelow(stateDir)
  t.ok([...modes.keys()].some(path => path.endsWith('pin.json')), 'a pin written')
  t.ok([...modes.keys()].some(path => path.endsWith('.image')), 'an image written')
  t.ok([...modes.keys()].some(path => /change-0002\.jsonl$/.test(path)), 'change files copied')
  ownerOnly(t, modes, 'STATE_DIR')
  t.equal((await stat(join(root, 'not-yet'))).mode & 0o777, 0o700, 'a directory made on the way to it too')
  t.equal((await stat(file)).mode & 0o777, 0o666, 'the editor\'s own files as they were')
})

t.test('under umask 0, a replica following a manifest keeps its downloads, the manifest and its state owner-only', async t => {
  const published = await tempDir(t)
  await writeFile(join(published, 'snap-1.jsonl'), toJsonLines(versioned(1)))
  await writeFile(join(published, 'chg-0001.jsonl'), changeText('chg-0001', 'changed'))
  const model = await loadSnapshotFile(join(published, 'snap-1.jsonl'))
  const { image } = await writeImageFile(model, published)
  model.memory.retire()
  await writeFile(join(published, 'manifest.json'), JSON.stringify({ manifest: 'explore', version: 1, snapshot: 'snap-1.jsonl', changes: ['chg-0001.jsonl'], image }))
  const site = await serveDirectory(t, published)
  const cacheDir = join(await tempDir(t), 'cache')
  const follower = await app(t, { snapshotUrl: new SecretUrl(`${site.origin}/manifest.json`), snapshotCacheDir: cacheDir })
  await follower.ready()
  await follower.snapshotSource.checkNow()
  t.match((await follower.inject('/-/status')).json(), { snapshot: { version: /\+chg-0001$/ }, reloads: { images: { read: 1 } } })
  // Served from the image, its snapshot still downloading behind (ADR 042): its temporary file comes and goes.
  await (follower.snapshotSource as ManifestFollower).settled()
  await follower.snapshotVersions.kept.idle()
  ownerOnly(t, await modesBelow(cacheDir), 'SNAPSHOT_CACHE_DIR, its STATE_DIR inside')

  // A plain snapshot URL: the cached copy and its record.
  const plain = join(await tempDir(t), 'cache')
  const single = await app(t, { snapshotUrl: new SecretUrl(`${site.origin}/snap-1.jsonl`), snapshotCacheDir: plain })
  await single.ready()
  await single.snapshotSource.checkNow()
  t.ok(single.snapshots.current() !== null)
  await single.snapshotVersions.kept.idle()
  ownerOnly(t, await modesBelow(plain), 'a plain URL\'s cache')
})

t.test('what an older release left readable by others is made owner-only at the next start; a link is not followed', async t => {
  const root = await tempDir(t)
  const file = join(root, 'snapshot.json')
  await writeFile(file, JSON.stringify(smallSnapshot()))
  const stateDir = join(root, 'state')
  const first = await app(t, { snapshotPath: file, stateDir })
  await first.snapshots.start()
  await first.snapshotVersions.kept.idle()
  await first.snapshots.images!.idle()
  await first.close()
  // As an older release left it: the umask's 022 modes.
  for (const [path, { directory }] of await modesBelow(stateDir)) await chmod(join(stateDir, path), directory ? 0o755 : 0o644)
  const outside = join(root, 'outside.txt')
  await writeFile(outside, 'not the replica\'s', { mode: 0o644 })
  await symlink(outside, join(stateDir, 'versions', 'a-link'))
  const again = await app(t, { snapshotPath: file, stateDir })
  await again.snapshots.start()
  const modes = await modesBelow(stateDir)
  modes.delete('.')
  ownerOnly(t, modes, 'below STATE_DIR')
  t.equal((await stat(outside)).mode & 0o777, 0o644, 'a link\'s target left as it is')
  t.equal((await stat(stateDir)).mode & 0o777, 0o755, 'STATE_DIR itself, which may be the operator\'s, keeps its mode')
})

t.test('what the command line writes for its user keeps the umask\'s modes: a snapshot written, a directory published', async t => {
  const dir = await tempDir(t)
  const out = join(dir, 'new', 'generated.jsonl')
  await writeSnapshotFile(out, { generatedAt: null, languages: ['en'], items: async (_code, each) => { await each(makeItem(1, '2024-01-01', [1])) } }, { format: 'jsonl' })
  t.equal((await stat(out)).mode & 0o777, 0o666)
  t.equal((await stat(join(dir, 'new'))).mode & 0o777, 0o777)
  const fleet = join(dir, 'fleet')
  const target = new DirectoryTarget(fleet)
  await target.putObject('generated.jsonl', out)
  await target.writeManifest('{}', null)
  for (const name of ['generated.jsonl', 'manifest.json']) t.equal((await stat(join(fleet, name))).mode & 0o777, 0o666, name)
})
