// Serving a chain of a snapshot and its change files (src/snapshot/store/serve-chain.ts): the reload's plan on its
// own, and SnapshotStore.serve(chain), the fleet's manifest follower: only the new change files are read when the
// served chain begins the new one; anything else is built again from the chain, a step back too, without loading the
// same snapshot again; a bad change file changes nothing.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { copyFile, link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { applyChangesToSnapshot, type ChangeLine, type SnapshotDocument } from '../../../src/snapshot/changes/merge-snapshot.js'
import { readChangeFile } from '../../../src/snapshot/changes/read-change-file.js'
import { loadSnapshotFile } from '../../../src/snapshot/load/load-snapshot.js'
import type { SnapshotModel } from '../../../src/snapshot/model/snapshot-model.js'
import { SnapshotStore } from '../../../src/snapshot/store/snapshot-store.js'
import { fileStamp, planReload, type ServedPart } from '../../../src/snapshot/store/serve-chain.js'
import { makeItem, tempDir, serveFile } from '../../helpers.js'

// src/snapshot/store/serve-chain.ts: SnapshotStore.serve(chain) on real files, each served state against a full load of its merge.
const doc: SnapshotDocument = { languages: { en: Array.from({ length: 12 }, (_, i) => makeItem(i + 1, `2024-01-0${1 + (i % 4)}`, [i % 3])) } }
const CHANGES: Record<string, ChangeLine[]> = {
  a: [{ op: 'upsert', language: 'en', ...makeItem(20, '2024-01-02', [1, 2]) }, { op: 'delete', language: 'en', pk: 3 }],
  b: [{ op: 'upsert', language: 'en', ...makeItem(4, '2024-02-01', [0]) }, { op: 'upsert', language: 'es', ...makeItem(1, '2024-01-01', [5]) }],
  c: [{ op: 'delete', language: 'en', pk: 20 }]
}

function pagesOf (model: SnapshotModel): string[] {
  return model.languages.flatMap(code => [null, [0], [1], [2], [5], [0, 1]].map(companies => {
    const page = model.language(code)!.page(companies, 0, 100)
    return `${code} ${String(companies)}: ${page.count} ${page.items.toString()}`
  }))
}

async function setup (t: Test) {
  const dir = await tempDir(t)
  const snapshot = join(dir, 'snap.json')
  await writeFile(snapshot, JSON.stringify(doc))
  const files: Record<string, string> = {}
  for (const [name, lines] of Object.entries(CHANGES)) {
    files[name] = join(dir, `${name}.jsonl`)
    await writeFile(files[name], [{ changes: 'explore', version: 1, id: name }, ...lines].map(line => `${JSON.stringify(line)}\n`).join(''))
  }
  const reads: string[] = []
  let loads = 0
  const store = new SnapshotStore(snapshot, {
    load: async file => { loads++; return await loadSnapshotFile(file) },
    readChanges: async (file, options) => { reads.push(file.slice(dir.length + 1)); return await readChangeFile(file, options) }
  })
  t.teardown(() => store.current()?.memory.retire())
  await store.start()
  /** The store serves the chain of these change files (names of CHANGES), as a full load of the merge would. */
  const serves = async (names: string[]) => {
    t.same((store.current()!.info.changes ?? []).map(change => change.id), names)
    const merged = join(dir, 'merged.json')
    await writeFile(merged, JSON.stringify(applyChangesToSnapshot(doc, names.map(name => CHANGES[name]!))))
    t.same(pagesOf(store.current()!), pagesOf(await loadSnapshotFile(merged)))
  }
  return { store, snapshot, files, reads, serves, loads: () => loads }
}

t.test('new change files are applied alone; a shorter chain steps back from the kept snapshot, with no load', async t => {
  const { store, snapshot, files, reads, serves, loads } = await setup(t)
  t.equal(await store.serve({ snapshot, changes: [files.a!] }), 'loaded')
  t.same(reads.splice(0), ['a.jsonl'])
  await serves(['a'])
  const root = store.current()!.info.snapshotVersion
  t.equal(store.current()!.info.version, `${root}+a`)
  t.equal(await store.serve({ snapshot, changes: [files.a!, files.b!, files.c!] }), 'loaded')
  t.same(reads.splice(0), ['b.jsonl', 'c.jsonl'], 'only the new ones read')
  await serves(['a', 'b', 'c'])
  t.equal(await store.serve({ snapshot, changes: [files.a!] }), 'loaded')
  t.same(reads.splice(0), ['a.jsonl'], 'a step back: the chain built again from the snapshot as loaded')
  await serves(['a'])
  t.equal(await store.serve({ snapshot, changes: [] }), 'loaded')
  await serves([])
  t.equal(loads(), 1, 'the snapshot was loaded once, at start')
  t.same(store.record.changeFiles(), { applied: 4, refused: 0 })
})

t.test('another snapshot: loaded, and the chain built on it; a bad change file changes nothing', async t => {
  const { store, snapshot, files, reads, serves, loads } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!] })
  const other = join(snapshot, '..', 'other.json')
  await writeFile(other, JSON.stringify(doc))
  t.equal(await store.serve({ snapshot: other, changes: [files.a!, files.b!] }), 'loaded')
  t.equal(loads(), 1, 'the same bytes under another name are the same snapshot')
  t.same(reads.splice(0), ['a.jsonl', 'b.jsonl'])
  await serves(['a', 'b'])
  t.equal(store.servedFiles()?.snapshot.file, other, 'served from the name it was asked for: compared by its stamp from now on')
  await writeFile(other, JSON.stringify({ ...doc, generated_at: '2026-01-01T00:00:00Z' }))
  t.equal(await store.serve({ snapshot: other, changes: [files.a!] }), 'loaded')
  t.equal(loads(), 2)
  t.equal(store.current()!.info.generatedAt, '2026-01-01T00:00:00Z')
  const before = pagesOf(store.current()!)
  await writeFile(files.b!, '{"changes": "explore", "version": 1, "id": "b"}\n{"op": "upsert", "language": "en", "pk": 1}\n')
  t.equal(await store.serve({ snapshot: other, changes: [files.a!, files.b!] }), 'failed')
  t.same(pagesOf(store.current()!), before)
  t.match(store.record.recentFailures()[0], { file: files.b, problems: ['b.jsonl:2: is_translated: is required'] })
  t.same(store.record.changeFiles(), { applied: 3, refused: 1 })
})

t.test('a copy of the served snapshot under another name, while change files are served: served from the root, not loaded', async t => {
  const { store, snapshot, files, serves, loads } = await setup(t)
  const copy = join(snapshot, '..', 'kept-copy.json')
  await writeFile(copy, JSON.stringify(doc))
  await store.serve({ snapshot, changes: [files.a!, files.b!] })
  // A rollback from <snapshot>+<change> to <snapshot>: the kept version is the snapshot alone, a copy.
  t.equal(await serveFile(store, copy), 'loaded')
  await serves([])
  t.equal(loads(), 1, 'no second load')
  t.same(store.servedFiles(), { snapshot: { file: copy, stamp: store.servedFiles()!.snapshot.stamp, digest: store.current()!.info.version }, changes: [] })
  t.equal(await store.serve({ snapshot: copy, changes: [files.a!] }), 'loaded')
  await serves(['a'])
  t.equal(loads(), 1)
})

t.test('a hard link to a served file (a kept version) does not make it another version', async t => {
  const { store, snapshot, files, reads, serves, loads } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!] })
  reads.splice(0)
  const stampBefore = store.servedFiles()!.snapshot.stamp
  await link(snapshot, join(snapshot, '..', 'linked.json'))
  t.equal(await fileStamp(snapshot), stampBefore, 'the stamp names the same file')
  t.equal(await store.serve({ snapshot, changes: [files.a!, files.b!] }), 'loaded')
  t.same(reads.splice(0), ['b.jsonl'], 'only the new one read')
  await serves(['a', 'b'])
  t.equal(loads(), 1)
})

t.test('a serve that changes nothing (its change file refused) leaves the served files named as they were', async t => {
  const { store, snapshot, files, loads } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!] })
  const copy = join(snapshot, '..', 'kept-copy.json')
  await writeFile(copy, JSON.stringify(doc))
  const bad = join(snapshot, '..', 'bad.jsonl')
  await writeFile(bad, '{"changes": "explore", "version": 1, "id": "bad"}\n{"op": "upsert"}\n')
  t.equal(await store.serve({ snapshot: copy, changes: [files.a!, bad] }), 'failed')
  t.equal(store.servedFiles()?.snapshot.file, snapshot, 'not the copy: a kept version\'s file may be removed after a failed rollback')
  t.equal(loads(), 1)
})

t.test('a bad file among the served ones (one edited into a bad file, or a bad one put before them) changes nothing; one after them only waits', async t => {
  const { store, snapshot, files, serves } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!, files.c!] })
  const before = pagesOf(store.current()!)
  const version = store.current()!.info.version
  const bad = join(snapshot, '..', 'b-bad.jsonl')
  await writeFile(bad, '{"changes": "explore", "version": 1, "id": "bad"}\n{"op": "upsert"}\n')
  t.equal(await store.serve({ snapshot, changes: [files.a!, bad, files.c!] }), 'failed', 'put before a served one')
  t.equal(store.current()!.info.version, version, 'the served version stays')
  t.same(pagesOf(store.current()!), before, 'and so does every page: c is not taken back')
  t.match(store.record.recentFailures()[0], { file: bad, problems: [/b-bad\.jsonl:2:/] })

  await writeFile(files.a!, '{"changes": "explore", "version": 1, "id": "a"}\n{"op": "delete"}\n')
  t.equal(await store.serve({ snapshot, changes: [files.a!, files.c!] }), 'failed', 'a served one edited into a bad file')
  t.same(pagesOf(store.current()!), before, 'a and c stay served')

  // Removing a served file while a bad one waits after it: the state without it is served.
  t.equal(await store.serve({ snapshot, changes: [bad] }), 'failed')
  await serves([])
  t.equal(store.status().failedInARow, 3, 'each refusal is reported')
})

t.test('a change file that is not a regular file (a named pipe, a link to nothing) is refused, never opened: the files after it wait, the process is not held', async t => {
  const { store, snapshot, files, serves } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!] })
  const dir = join(snapshot, '..')
  const pipe = join(dir, 'b-pipe.jsonl')
  execFileSync('mkfifo', [pipe])
  t.equal(await store.serve({ snapshot, changes: [files.a!, pipe, files.c!] }), 'failed')
  t.match(store.record.recentFailures()[0], { file: pipe, reason: 'invalid', problems: ['a named pipe, not a file'] })
  await serves(['a'])
  const dangling = join(dir, 'b-link.jsonl')
  await symlink(join(dir, 'nowhere.jsonl'), dangling)
  t.equal(await store.serve({ snapshot, changes: [files.a!, dangling, files.c!] }), 'failed')
  t.match(store.record.recentFailures()[0], { file: dangling, problems: ['a link to a file that does not exist'] })
  await serves(['a'])
  t.equal(await store.serve({ snapshot, changes: [files.a!, files.c!] }), 'loaded', 'gone from the chain: the next file applies')
  await serves(['a', 'c'])
})

t.test('a change file may be a link that resolves inside its own directory; a link that leads out, however, is refused before its target is opened', async t => {
  const { snapshot, files } = await setup(t)
  const dir = join(snapshot, '..')
  const outside = await tempDir(t)
  // The default reader: the rule a replica's changes directory is read by.
  const store = new SnapshotStore(snapshot)
  t.teardown(() => store.current()?.memory.retire())
  await store.start()
  await mkdir(join(dir, 'kept'))
  await copyFile(files.b!, join(dir, 'kept', 'b.jsonl'))
  await symlink(join('kept', 'b.jsonl'), join(dir, 'b-inside.jsonl'))
  t.equal(await store.serve({ snapshot, changes: [files.a!, join(dir, 'b-inside.jsonl')] }), 'loaded', 'a link into a directory inside')
  t.same(store.current()!.info.changes!.map(change => change.id), ['a', 'b'])
  await copyFile(files.c!, join(outside, 'c.jsonl'))
  execFileSync('mkfifo', [join(outside, 'pipe.jsonl')])
  await symlink(outside, join(dir, 'out'))
  await symlink(join(outside, 'c.jsonl'), join(dir, 'c-link-out.jsonl'))
  const cases: Array<[string, string, string]> = [
    ['a link out', 'c-out.jsonl', join(outside, 'c.jsonl')],
    ['a relative link out', 'c-up.jsonl', join('..', basename(outside), 'c.jsonl')],
    ['a link through a directory link that leads out', 'c-via.jsonl', join('out', 'c.jsonl')],
    ['a link to a link out', 'c-chain.jsonl', 'c-link-out.jsonl'],
    ['a link out to a named pipe (opened, it would say so)', 'c-pipe.jsonl', join(outside, 'pipe.jsonl')]
  ]
  for (const [what, name, target] of cases) {
    await symlink(target, join(dir, name))
    t.equal(await store.serve({ snapshot, changes: [files.a!, join(dir, 'b-inside.jsonl'), join(dir, name)] }), 'failed', what)
    t.match(store.record.recentFailures()[0], {
      file: join(dir, name), reason: 'invalid', problems: [/^a symbolic link out of the changes directory: /]
    }, what)
    t.same(store.current()!.info.changes!.map(change => change.id), ['a', 'b'], `${what}: the served state unchanged`)
  }
  t.equal(await store.serve({ snapshot, changes: [files.a!, join(dir, 'b-inside.jsonl'), files.c!] }), 'loaded', 'a regular file applies')
})

t.test('a change file with the id of one applied before it is refused: two states must not share a version name', async t => {
  const { store, snapshot, files, serves } = await setup(t)
  const again = join(snapshot, '..', 'c-again.jsonl')
  await writeFile(again, (await readFile(files.c!, 'utf8')).replace('"id":"c"', '"id":"a"'))
  t.equal(await store.serve({ snapshot, changes: [files.a!, again] }), 'failed')
  t.match(store.record.recentFailures()[0], { file: again, reason: 'invalid', problems: ['c-again.jsonl:1: id: "a" is already the id of a.jsonl, applied before it: each change file needs one of its own'] })
  await serves(['a'])
})

t.test('served change files are known by content, not by path: after a pin or a rollback, a bad file put before one still changes nothing', async t => {
  const { store, snapshot, files, serves, loads } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!, files.c!] })
  // As after a pin or a rollback and an unpin: the served files are named by a kept version's copies.
  const kept = { a: join(snapshot, '..', 'kept-a.jsonl'), c: join(snapshot, '..', 'kept-c.jsonl') }
  await copyFile(files.a!, kept.a)
  await copyFile(files.c!, kept.c)
  t.equal(await store.serve({ snapshot, changes: [kept.a, kept.c] }), 'loaded')
  t.same(store.servedFiles()!.changes.map(file => file.file), [kept.a, kept.c])
  const bad = join(snapshot, '..', 'b-bad.jsonl')
  await writeFile(bad, '{"changes": "explore", "version": 1, "id": "bad"}\n{"op": "upsert"}\n')
  t.equal(await store.serve({ snapshot, changes: [files.a!, bad, files.c!] }), 'failed')
  await serves(['a', 'c'])
  t.equal(loads(), 1)
})

t.test('a new snapshot is served up to a bad change file, also one that was served on the snapshot before', async t => {
  const { store, snapshot, files, loads } = await setup(t)
  await store.serve({ snapshot, changes: [files.a!, files.c!] })
  const bad = join(snapshot, '..', 'b-bad.jsonl')
  await writeFile(bad, '{"changes": "explore", "version": 1, "id": "bad"}\n{"op": "upsert"}\n')
  const other = join(snapshot, '..', 'other.json')
  await writeFile(other, JSON.stringify({ ...doc, generated_at: '2026-02-02T00:00:00Z' }))
  t.equal(await store.serve({ snapshot: other, changes: [files.a!, bad, files.c!] }), 'failed')
  t.equal(loads(), 2, 'the new snapshot loaded once')
  t.equal(store.current()!.info.generatedAt, '2026-02-02T00:00:00Z', 'and served, up to the bad file: not loaded again at every reload while the file stays bad')
  t.same((store.current()!.info.changes ?? []).map(change => change.id), ['a'])
})

// src/snapshot/store/serve-chain.ts: the reload's plan, on its own: every case the store's execute carries out, decided here.
const part = (changes: number, laterApplied: boolean[] = [], pathApplied: boolean[] = []): ServedPart =>
  ({ changes, laterApplied, pathApplied })

t.test('nothing served, or another snapshot: read it, then apply every change file beside the served state', async t => {
  const read = { base: 'read', from: 0, eachServed: false }
  t.match(planReload(0, null, null), read)
  t.match(planReload(2, null, part(0)), read)
  t.match(planReload(2, 3, null), { ...read, keepServedIfRefused: [false, false] }, 'a refusal serves what came before it')
})

t.test('a snapshot alone where one alone is served: read again, even unchanged (a source hands it when it may differ)', async t => {
  t.match(planReload(0, 0, part(0)), { base: 'read' })
  t.match(planReload(1, 0, part(0, [false], [false])), { base: 'served', from: 0 }, 'with a change file: extended')
})

t.test('a snapshot alone its source knows by digest to be the one served (a download, a kept copy): not read again', async t => {
  t.match(planReload(0, 0, { ...part(0), known: true }), { base: 'served', from: 0, eachServed: true })
  t.match(planReload(0, 2, { ...part(0), known: true }), { base: 'root' }, 'served with change files: the root again')
})

t.test('the served chain begins the wanted one: only the new change files, each served as it is made', async t => {
  t.match(planReload(1, 0, part(0, [false], [false])), { base: 'served', from: 0, eachServed: true })
  t.match(planReload(5, 3, part(3, [false, false], [true, true, true, false, false])), { base: 'served', from: 3, eachServed: true })
  t.match(planReload(3, 3, part(3, [], [true, true, true])), { base: 'served', from: 3 }, 'nothing new: the same state')
  t.match(planReload(2, 2, part(2, [], [true, true])), { base: 'served', from: 2 }, 'the snapshot with its change files again')
})

t.test('the same snapshot with another list of change files (edited, removed, a step back): built again from the root', async t => {
  t.match(planReload(1, 3, part(1, [], [true])), { base: 'root', from: 0, eachServed: false })
  t.match(planReload(0, 3, part(0)), { base: 'root', from: 0 })
})

t.test('a refused change file keeps the served state only when serving less would take back a change served now', async t => {
  // Served: a, b. Wanted: a, x, b (x new, b the same bytes): refusing x and serving a alone would take back b.
  t.same(planReload(3, 2, part(1, [false, true], [true, false, true])).keepServedIfRefused, [true, true, true])
  // Served: a, b. Wanted: a, b', c: b' is b edited in place (its path served) and c is new.
  t.same(planReload(3, 2, part(1, [false, false], [true, true, false])).keepServedIfRefused, [true, true, false])
  // Extending a, b with c, d: a refusal of either only waits.
  t.same(planReload(4, 2, part(2, [false, false], [true, true, false, false])).keepServedIfRefused, [true, true, false, false])
})
