// Change files dropped by editors with real files in real temporary directories: every way
// editors save, bursts, files edited or removed after they were applied, a new snapshot under them, bad
// files; after each, the state served is, page for page, a full load of the merged snapshot.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { mkdir, open, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { applyChangesToSnapshot, type ChangeLine, type SnapshotDocument } from '../src/snapshot/changes/merge-snapshot.js'
import { loadSnapshotFile } from '../src/snapshot/load/load-snapshot.js'
import type { SnapshotModel } from '../src/snapshot/model/snapshot-model.js'
import type { ReloadOutcome } from '../src/snapshot/store/snapshot-store.js'
import { makeItem, tempDir, testStateDir } from './helpers.js'

/** 30 `en` items over 6 days, companies 1–3; 2 `es` items. */
function snapshotDoc (title = 'v1'): SnapshotDocument {
  const en = Array.from({ length: 30 }, (_, i) => makeItem(i + 1, `2024-01-0${1 + (i % 6)}`, [1 + (i % 3)], { translated_title: `${title} item ${i + 1}` }))
  return { generated_at: '2026-01-01T00:00:01Z', languages: { en, es: [makeItem(101, '2023-05-01', [1]), makeItem(102, '2023-06-01', [2])] } }
}

/** A change file's text: its header, then its lines. */
function changeText (id: string, lines: readonly ChangeLine[]): string {
  return [{ changes: 'explore', version: 1, id }, ...lines].map(line => `${JSON.stringify(line)}\n`).join('')
}

const upsert = (language: string, pk: number, backdate: string, companies: number[], title: string): ChangeLine =>
  ({ op: 'upsert', language, ...makeItem(pk, backdate, companies, { translated_title: title }) })
const del = (language: string, pk: number): ChangeLine => ({ op: 'delete', language, pk })

/** A few change files that touch new and present items, dates and companies, a new language. */
const CHANGES: Record<string, ChangeLine[]> = {
  '0001': [upsert('en', 5, '2024-02-01', [2, 9], 'moved to February'), del('en', 7), upsert('en', 50, '2024-01-03', [1], 'new 50')],
  '0002': [upsert('fr', 1, '2024-03-01', [1], 'bonjour'), del('es', 101), del('en', 999)],
  '0003': [upsert('en', 51, '2024-01-03', [3], 'new 51'), upsert('en', 5, '2024-01-02', [1], 'moved back'), del('en', 50)],
  '0004': [del('en', 1), del('en', 2), upsert('es', 103, '2023-07-01', [2, 3], 'nuevo')]
}

interface Editor {
  app: FastifyInstance
  file: string
  dir: string
  /** The snapshot document on disk now. */
  doc: SnapshotDocument
}

async function editorApp (t: Test, changes: string[] = []): Promise<Editor> {
  const root = await tempDir(t)
  const file = join(root, 'snapshot.json')
  const dir = `${file}.changes`
  const doc = snapshotDoc()
  await writeFile(file, JSON.stringify(doc))
  if (changes.length > 0) {
    await mkdir(dir)
    for (const name of changes) await writeFile(join(dir, `${name}.jsonl`), changeText(`c${name}`, CHANGES[name] as ChangeLine[]))
  }
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: testStateDir(file), watch: true, reloadDebounceMs: 40 } }))
  t.teardown(() => app.close())
  await app.snapshots.start()
  return { app, file, dir, doc }
}

/** Every page of a sample, as a model serves it. */
function pagesOf (model: SnapshotModel): string[] {
  const filters = [null, [1], [2], [3], [9], [1, 3], [2, 9]]
  return model.languages.flatMap(code => filters.flatMap(companies => [[0, 100], [0, 7], [5, 10]].map(([offset, limit]) => {
    const page = model.language(code)!.page(companies, offset!, limit!)
    return `${code} ${String(companies)} ${offset}+${limit}: ${page.count} [${page.items.toString()}]`
  })))
}

/** The pages a full load of `doc` with `changes` (names of CHANGES, in order) merged into it serves. */
async function mergedPages (t: Test, doc: SnapshotDocument, changes: string[]): Promise<string[]> {
  const file = join(await tempDir(t), 'merged.json')
  await writeFile(file, JSON.stringify(applyChangesToSnapshot(doc, changes.map(name => CHANGES[name] as ChangeLine[]))))
  const model = await loadSnapshotFile(file)
  const pages = pagesOf(model)
  model.memory.retire()
  return pages
}

const ids = (app: FastifyInstance): string[] => (app.snapshots.current()!.info.changes ?? []).map(change => change.id)

/** Waits for reloads until the served chain is `changes` (c-prefixed ids), and returns their outcomes. */
async function untilChain (app: FastifyInstance, changes: string[]): Promise<ReloadOutcome[]> {
  const outcomes: ReloadOutcome[] = []
  const want = changes.map(name => `c${name}`).join(',')
  while (ids(app).join(',') !== want) {
    const [outcome] = await once(app.snapshots, 'reloaded', { signal: AbortSignal.timeout(20_000) }) as [ReloadOutcome]
    outcomes.push(outcome)
  }
  await app.snapshots.idle()
  return outcomes
}

async function servesMerged (t: Test, editor: Editor, changes: string[]): Promise<void> {
  t.same(ids(editor.app), changes.map(name => `c${name}`), 'the chain served')
  t.same(pagesOf(editor.app.snapshots.current()!), await mergedPages(t, editor.doc, changes), 'every page as a full load of the merged snapshot')
}

async function status (app: FastifyInstance) {
  return JSON.parse((await app.inject('/-/status')).body)
}

const write = async (editor: Editor, name: string, id = `c${name}`): Promise<void> => {
  await mkdir(editor.dir, { recursive: true })
  await writeFile(join(editor.dir, `${name}.jsonl`), changeText(id, CHANGES[name] as ChangeLine[]))
}

t.test('change files on disk at start are applied after the snapshot, in name order', async t => {
  const editor = await editorApp(t, ['0002', '0001'])
  await servesMerged(t, editor, ['0001', '0002'])
  const { snapshot, reloads } = await status(editor.app)
  t.match(snapshot.version, /^[\w-]{27}\+c0002$/)
  t.same(snapshot.changes.map((change: { id: string, absentDeletes: number }) => [change.id, change.absentDeletes]), [['c0001', 0], ['c0002', 1]])
  t.ok(snapshot.garbageBytes > 0, 'replaced and deleted items counted as garbage')
  t.same(reloads.changeFiles, { applied: 2, refused: 0 })
})

t.test('a changes directory made after the start is no reload: its first file is applied alone, on the served snapshot', async t => {
  const editor = await editorApp(t)
  const before = (await status(editor.app)).reloads
  const seen = once(editor.app.snapshotWatcher!, 'changesDir', { signal: AbortSignal.timeout(20_000) })
  await mkdir(editor.dir)
  await seen
  await write(editor, '0001')
  t.same(await untilChain(editor.app, ['0001']), ['loaded'], 'one reload: the change file, no read of the snapshot for the empty directory')
  await servesMerged(t, editor, ['0001'])
  const after = (await status(editor.app)).reloads
  t.equal(after.succeeded, before.succeeded + 1, 'one reload counted')
})

t.test('a new change file written in place is applied alone; the next one too', async t => {
  const editor = await editorApp(t)
  await write(editor, '0001')
  t.same(await untilChain(editor.app, ['0001']), ['loaded'])
  await servesMerged(t, editor, ['0001'])
  const version = (await status(editor.app)).snapshot.version as string
  await write(editor, '0002')
  await untilChain(editor.app, ['0001', '0002'])
  await servesMerged(t, editor, ['0001', '0002'])
  t.equal((await status(editor.app)).snapshot.version, version.replace(/\+c0001$/, '+c0002'))
  t.match(await status(editor.app), { reloads: { changeFiles: { applied: 2, refused: 0 }, failed: 0 } })
})

t.test('a change file written to a temp file and renamed into the directory is applied', async t => {
  const editor = await editorApp(t, ['0001'])
  const temp = join(editor.dir, '.0002.jsonl.swp')
  await writeFile(temp, changeText('c0002', CHANGES['0002']!))
  await rename(temp, join(editor.dir, '0002.jsonl'))
  await untilChain(editor.app, ['0001', '0002'])
  await servesMerged(t, editor, ['0001', '0002'])
})

t.test('a change file copied slowly in chunks: the complete file is applied in the end', async t => {
  const editor = await editorApp(t)
  await mkdir(editor.dir)
  const bytes = Buffer.from(changeText('c0001', CHANGES['0001']!))
  const handle = await open(join(editor.dir, '0001.jsonl'), 'w')
  const chunk = Math.ceil(bytes.length / 4)
  for (let at = 0; at < bytes.length; at += chunk) {
    await handle.write(bytes.subarray(at, at + chunk))
    await handle.sync()
    // Longer than the debounce: half-written files are seen and refused on the way.
    await new Promise(resolve => setTimeout(resolve, 60))
  }
  await handle.close()
  await untilChain(editor.app, ['0001'])
  await servesMerged(t, editor, ['0001'])
  t.equal((await status(editor.app)).reloads.failedInARow, 0)
})

t.test('a burst of change files: all applied, in name order', async t => {
  const editor = await editorApp(t)
  for (const name of ['0001', '0002', '0003', '0004']) await write(editor, name)
  await untilChain(editor.app, ['0001', '0002', '0003', '0004'])
  await servesMerged(t, editor, ['0001', '0002', '0003', '0004'])
})

t.test('a change file edited after it was applied: the state is built again with the new content, under new ETags', async t => {
  const editor = await editorApp(t, ['0001', '0002'])
  const page = '/en/api/internal/explore/?companies=1'
  const before = await editor.app.inject(page)
  const version = (await status(editor.app)).snapshot.version as string
  const reloaded = once(editor.app.snapshots, 'reloaded')
  // 0001 now holds what 0003 holds, under its own name.
  await writeFile(join(editor.dir, '0001.jsonl'), changeText('c0001', CHANGES['0003']!))
  t.same(await reloaded, ['loaded'])
  await editor.app.snapshots.idle()
  t.same(ids(editor.app), ['c0001', 'c0002'])
  const file = join(await tempDir(t), 'merged.json')
  await writeFile(file, JSON.stringify(applyChangesToSnapshot(editor.doc, [CHANGES['0003']!, CHANGES['0002']!])))
  t.same(pagesOf(editor.app.snapshots.current()!), pagesOf(await loadSnapshotFile(file)))
  // The version's name says only the last change's id: the same name now, other bytes.
  t.equal((await status(editor.app)).snapshot.version, version, 'the same version name')
  const after = await editor.app.inject({ url: page, headers: { 'if-none-match': before.headers.etag as string } })
  t.equal(after.statusCode, 200, 'a client holding the page before the edit is not told it is current')
  t.not(after.headers.etag, before.headers.etag)
  t.not(after.body, before.body)
})

t.test('a change file removed: the state without it is served; one inserted earlier in the order: built again with it', async t => {
  const editor = await editorApp(t, ['0001', '0002', '0003'])
  await unlink(join(editor.dir, '0002.jsonl'))
  await untilChain(editor.app, ['0001', '0003'])
  await servesMerged(t, editor, ['0001', '0003'])
  await write(editor, '0002')
  await untilChain(editor.app, ['0001', '0002', '0003'])
  await servesMerged(t, editor, ['0001', '0002', '0003'])
  await rm(editor.dir, { recursive: true })
  await untilChain(editor.app, [])
  await servesMerged(t, editor, [])
})

t.test('a new snapshot: built again from it and every change file', async t => {
  const editor = await editorApp(t, ['0001', '0002'])
  editor.doc = snapshotDoc('v2')
  const reloaded = once(editor.app.snapshots, 'reloaded')
  await writeFile(editor.file, JSON.stringify(editor.doc))
  t.same(await reloaded, ['loaded'])
  await editor.app.snapshots.idle()
  await servesMerged(t, editor, ['0001', '0002'])
  t.match(JSON.parse((await editor.app.inject('/en/api/internal/explore/?limit=1&offset=3')).body).results[0].translated_title, /^v2 /)
})

t.test('a bad change file changes nothing and is reported with its line; once fixed it is applied', async t => {
  const editor = await editorApp(t, ['0001'])
  const before = pagesOf(editor.app.snapshots.current()!)
  await mkdir(editor.dir, { recursive: true })
  const reloaded = once(editor.app.snapshots, 'reloaded')
  await writeFile(join(editor.dir, '0002.jsonl'), changeText('c0002', [CHANGES['0002']![0]!, { op: 'delete', language: 'en' } as unknown as ChangeLine]))
  t.same(await reloaded, ['failed'])
  t.same(pagesOf(editor.app.snapshots.current()!), before, 'nothing of it applied')
  const { reloads } = await status(editor.app)
  t.match(reloads, { failedInARow: 1, changeFiles: { applied: 1, refused: 1 } })
  t.same(reloads.recentFailures[0].problems, ['0002.jsonl:3: pk: is required'])
  t.match(reloads.recentFailures[0].file, /0002\.jsonl$/)
  // A later file waits behind the bad one: the chain is served up to it.
  await write(editor, '0003')
  await once(editor.app.snapshots, 'reloaded')
  t.same(ids(editor.app), ['c0001'])
  await write(editor, '0002')
  await untilChain(editor.app, ['0001', '0002', '0003'])
  await servesMerged(t, editor, ['0001', '0002', '0003'])
  t.match((await status(editor.app)).reloads, { failedInARow: 0 })
})

t.test('the console lists the applied change files; metrics count applied and refused ones', async t => {
  const editor = await editorApp(t, ['0001', '0002'])
  const page = (await editor.app.inject('/-/')).body
  t.match(page, /id="applied-changes"/)
  t.match(page, /c0001[\s\S]*c0002/)
  const metrics = (await editor.app.inject('/-/metrics')).body
  t.match(metrics, /explore_change_files_total\{outcome="applied"\} 2/)
  t.match(metrics, /explore_change_files_total\{outcome="refused"\} 0/)
})

t.test('a change file that is a symbolic link out of the changes directory is refused, naming it and why; nothing of its target is read or shown, and the served state is unchanged', async t => {
  const editor = await editorApp(t, ['0001'])
  const before = pagesOf(editor.app.snapshots.current()!)
  const outside = await tempDir(t)
  // A valid change file (it would be applied) and a file of other lines (their starts would be quoted).
  await writeFile(join(outside, 'valid.jsonl'), changeText('leaked-id', [upsert('en', 1, '2024-01-01', [1], 'leaked title')]))
  await writeFile(join(outside, 'passwd'), 'leakedroot:x:0:0:root:/root:/bin/bash\nleakeddaemon:x:1:1\n')
  for (const [what, target] of [['an absolute link to a valid change file', join(outside, 'valid.jsonl')], ['a relative link to other lines', relative(editor.dir, join(outside, 'passwd'))]] as const) {
    const reloaded = once(editor.app.snapshots, 'reloaded')
    await rm(join(editor.dir, '0002.jsonl'), { force: true })
    await symlink(target, join(editor.dir, '0002.jsonl'))
    t.same(await reloaded, ['failed'], what)
    await editor.app.snapshots.idle()
    t.same(ids(editor.app), ['c0001'], `${what}: not applied`)
    t.same(pagesOf(editor.app.snapshots.current()!), before, `${what}: the served state unchanged`)
    const { reloads } = await status(editor.app)
    t.match(reloads.recentFailures[0], {
      file: join(editor.dir, '0002.jsonl'),
      problems: ['a symbolic link out of the changes directory: a change file must be a regular file (or a link to one in the same directory)']
    }, what)
    const shown = [JSON.stringify(await status(editor.app)), (await editor.app.inject('/-/')).body, (await editor.app.inject('/-/metrics')).body].join('\n')
    t.notMatch(shown, /leaked/, `${what}: nothing of the target in status, console or metrics`)
  }
})

/** The kubelet's AtomicWriter: a new directory, `..data` swapped to it in one rename, links for new keys, the old one removed. */
async function configMapWrite (dir: string, files: Record<string, string>, generation: number): Promise<void> {
  const data = `..2026_01_0${generation}_00_00_00.${generation}`
  await mkdir(join(dir, data), { recursive: true })
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, data, name), text)
  await symlink(data, join(dir, '..data_tmp'))
  await rename(join(dir, '..data_tmp'), join(dir, '..data'))
  for (const name of Object.keys(files)) await symlink(join('..data', name), join(dir, name)).catch(() => {})
  if (generation > 1) await rm(join(dir, `..2026_01_0${generation - 1}_00_00_00.${generation - 1}`), { recursive: true })
}

t.test('a changes directory laid out as a Kubernetes ConfigMap (links into ..data/) is applied, and so are its updates', async t => {
  const editor = await editorApp(t)
  await configMapWrite(editor.dir, { '0001.jsonl': changeText('c0001', CHANGES['0001']!) }, 1)
  await untilChain(editor.app, ['0001'])
  await servesMerged(t, editor, ['0001'])
  await configMapWrite(editor.dir, { '0001.jsonl': changeText('c0001', CHANGES['0001']!), '0002.jsonl': changeText('c0002', CHANGES['0002']!) }, 2)
  await untilChain(editor.app, ['0001', '0002'])
  await servesMerged(t, editor, ['0001', '0002'])
  // Only a file's content changes: the links stay, ..data moves.
  const reloaded = once(editor.app.snapshots, 'reloaded')
  await configMapWrite(editor.dir, { '0001.jsonl': changeText('c0001', CHANGES['0001']!), '0002.jsonl': changeText('c0002', CHANGES['0003']!) }, 3)
  t.same(await reloaded, ['loaded'])
  await editor.app.snapshots.idle()
  t.same(ids(editor.app), ['c0001', 'c0002'])
  t.same(pagesOf(editor.app.snapshots.current()!), await mergedPages(t, editor.doc, ['0001', '0003']), 'the new content served')
  t.match((await status(editor.app)).reloads, { failedInARow: 0 })
})
