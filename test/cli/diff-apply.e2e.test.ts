// `explore-replica diff` and `apply` (src/cli/diff-command.ts, apply-command.ts) as child processes over the
// generator's random snapshots: apply(OLD, diff(OLD, NEW)) serves the same pages as NEW, whichever format
// each is in; the change file holds only what changed; and every refusal's exit code.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { link, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { generateSnapshot } from '../../src/generate/write-snapshot.js'
import { Rng } from '../../src/generate/random-source.js'
import type { Snapshot, SnapshotItem } from '../../src/schemas/snapshot.js'
import { BUILT_CLI as MAIN, childEnv, makeItem, type SnapshotDoc, tempDir, testStateDir, toJsonLines } from '../helpers.js'

function run (...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [MAIN, ...args], { env: childEnv() }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
    })
  })
}

/** `n` of `what`, singular for 1: as diff says its counts. */
function count (n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}

/**
 * OLD from the generator, and NEW made of it at random: items deleted, items edited (a title, a date, the
 * companies, an extra field), items added from another generated snapshot under new pks. Returns what it did.
 */
function evolve (seed: number): { old: Snapshot, next: Snapshot, deleted: number, edited: number, added: number } {
  const old = generateSnapshot({ seed, items: 400 })
  const extra = generateSnapshot({ seed: seed + 1000, items: 60 })
  const rng = new Rng(seed, 'evolve')
  let deleted = 0
  let edited = 0
  let added = 0
  const languages: Snapshot['languages'] = {}
  for (const [code, items] of Object.entries(old.languages)) {
    const kept: SnapshotItem[] = []
    for (const item of items) {
      const roll = rng.float()
      if (roll < 0.08) {
        deleted++
      } else if (roll < 0.2) {
        edited++
        const change = rng.int(0, 3)
        if (change === 0) kept.push({ ...item, translated_title: `${item.translated_title} (edited)` })
        else if (change === 1) kept.push({ ...item, backdate: `2020-0${rng.int(1, 9)}-1${rng.int(0, 9)}` })
        else if (change === 2) kept.push({ ...item, companies: [...item.companies, 9999] })
        else kept.push({ ...item, extra: { seed } } as SnapshotItem)
      } else {
        kept.push(item)
      }
    }
    const pks = new Set(items.map(item => item.pk))
    for (const item of extra.languages[code] ?? []) {
      if (!rng.chance(0.5)) continue
      let pk = item.pk + 1_000_000
      while (pks.has(pk)) pk++
      kept.push({ ...item, pk })
      added++
    }
    // NEW in another order than OLD: the diff must not depend on it.
    languages[code] = kept.reverse()
  }
  return { old, next: { generated_at: '2026-11-24T10:00:00Z', languages }, deleted, edited, added }
}

async function app (t: Test, snapshotPath: string): Promise<FastifyInstance> {
  const built = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath, stateDir: testStateDir(snapshotPath), watch: false } }))
  t.teardown(() => built.close())
  await built.snapshots.start()
  return built
}

/** Every page a client could ask for that tells two snapshots apart: each language, filtered or not, at each offset. */
function urls (doc: Snapshot): string[] {
  const out: string[] = []
  for (const [code, items] of Object.entries(doc.languages)) {
    const companies = [...new Set(items.flatMap(item => item.companies))].slice(0, 6)
    for (const filter of ['', ...companies.map(id => `companies=${id}&`), 'companies=9999&']) {
      for (const offset of [0, 10, 50, Math.max(0, items.length - 7)]) out.push(`/${code}/api/internal/explore/?${filter}limit=25&offset=${offset}`)
    }
    out.push(`/${code}/api/internal/explore/?limit=1000`)
  }
  return out
}

for (const seed of [1, 2, 3]) {
  t.test(`apply(OLD, diff(OLD, NEW)) serves the same pages as NEW (generator seed ${seed})`, async t => {
    const dir = await tempDir(t)
    const { old, next, deleted, edited, added } = evolve(seed)
    // Any format each: OLD a document, NEW JSON Lines for odd seeds and a document for even ones.
    const oldFile = join(dir, 'old.json')
    await writeFile(oldFile, JSON.stringify(old))
    const newFile = join(dir, seed % 2 === 1 ? 'new.jsonl' : 'new.json')
    await writeFile(newFile, seed % 2 === 1 ? toJsonLines(next as SnapshotDoc) : JSON.stringify(next))
    const changes = join(dir, 'chg-0001.jsonl')
    const diffed = await run('diff', oldFile, newFile, '--out', changes)
    t.equal(diffed.code, 0, diffed.stderr)
    t.match(diffed.stdout, `(id chg-0001): ${count(edited + added, 'upsert')} (${added} new, ${edited} changed), ${count(deleted, 'delete')}`)
    const lines = (await readFile(changes, 'utf8')).trimEnd().split('\n').map(line => JSON.parse(line))
    t.same(lines[0], { changes: 'explore', version: 1, id: 'chg-0001', generated_at: '2026-11-24T10:00:00Z' })
    t.equal(lines.length, 1 + edited + added + deleted, 'only what changed')

    const merged = join(dir, seed === 3 ? 'merged.json' : 'merged.jsonl')
    const applied = await run('apply', oldFile, changes, '--out', merged)
    t.equal(applied.code, 0, applied.stderr)
    t.match(applied.stdout, /^Wrote .*merged\.jsonl? \(en: \d+, es: \d+, fr: \d+ items; 1 change file applied\)/)

    const [expected, actual] = [await app(t, newFile), await app(t, merged)]
    let differ = 0
    for (const url of urls(next)) {
      const [want, got] = [await expected.inject(url), await actual.inject(url)]
      if (want.statusCode !== got.statusCode || want.body !== got.body) {
        differ++
        t.equal(got.body, want.body, url)
      }
    }
    t.equal(differ, 0, `${urls(next).length} pages the same`)
  })
}

t.test('diff: the same snapshot in two formats is no change; the id defaults to --out\'s name or is given', async t => {
  const dir = await tempDir(t)
  const doc = generateSnapshot({ seed: 7, items: 50 })
  const json = join(dir, 'a.json')
  await writeFile(json, JSON.stringify(doc, null, 2))
  // The same items with their keys in another order: no change either.
  const lines = join(dir, 'a.jsonl')
  const shuffled = { ...doc, languages: Object.fromEntries(Object.entries(doc.languages).map(([code, items]) => [code, items.map(item => Object.fromEntries(Object.entries(item).reverse()))])) }
  await writeFile(lines, toJsonLines(shuffled as SnapshotDoc))
  const none = await run('diff', json, lines, '--out', join(dir, 'none.jsonl'), '--id', '2026-11-24.nothing')
  t.equal(none.code, 0, none.stderr)
  t.match(none.stdout, '(id 2026-11-24.nothing): 0 upserts (0 new, 0 changed), 0 deletes')
  t.same(JSON.parse(await readFile(join(dir, 'none.jsonl'), 'utf8')), { changes: 'explore', version: 1, id: '2026-11-24.nothing', generated_at: doc.generated_at })
})

t.test('diff: one upsert and one delete are said so, in the singular', async t => {
  const dir = await tempDir(t)
  const old = join(dir, 'old.jsonl')
  await writeFile(old, toJsonLines({ languages: { en: [makeItem(1, '2024-01-01', []), makeItem(2, '2024-01-01', [])] } }))
  const next = join(dir, 'new.jsonl')
  await writeFile(next, toJsonLines({ languages: { en: [makeItem(2, '2024-01-01', [], { translated_title: 'edited' })] } }))
  const diffed = await run('diff', old, next, '--out', join(dir, 'chg-one.jsonl'))
  t.equal(diffed.code, 0, diffed.stderr)
  t.match(diffed.stdout, '(id chg-one): 1 upsert (0 new, 1 changed), 1 delete, ')
})

t.test('diff and apply refuse what they cannot do: exit 1 with the reason, nothing written; usage is exit 2', async t => {
  const dir = await tempDir(t)
  const good = join(dir, 'good.json')
  await writeFile(good, JSON.stringify({ languages: { en: [makeItem(1, '2024-01-01', [])] } }))
  const bad = join(dir, 'bad.json')
  await writeFile(bad, JSON.stringify({ languages: { en: [{ pk: 1 }] } }))
  const out = join(dir, 'out.jsonl')

  const invalid = await run('diff', good, bad, '--out', out)
  t.equal(invalid.code, 1)
  t.match(invalid.stderr, `snapshot ${bad} is invalid`)
  await t.rejects(readFile(out), { code: 'ENOENT' }, 'nothing written')

  const carriesOp = join(dir, 'op.json')
  await writeFile(carriesOp, JSON.stringify({ languages: { en: [makeItem(1, '2024-01-02', [], { op: 'x' })] } }))
  const op = await run('diff', good, carriesOp, '--out', out)
  t.equal(op.code, 1)
  t.match(op.stderr, 'en item 1 has a field "op", which a change file reads as the line\'s operation: nothing written')
  await t.rejects(readFile(out), { code: 'ENOENT' })

  const badChange = join(dir, 'chg-bad.jsonl')
  await writeFile(badChange, '{"op": "delete", "language": "en", "pk": 1}\n')
  const applied = await run('apply', good, badChange, '--out', out)
  t.equal(applied.code, 1)
  t.match(applied.stderr, 'chg-bad.jsonl:1: the header is missing')
  await t.rejects(readFile(out), { code: 'ENOENT' })

  for (const [args, message] of [
    [['diff', good, '--out', out], 'expected two snapshots, OLD and NEW; got 1'],
    [['diff', good, good], '--out CHANGES.jsonl is required'],
    [['diff', good, good, '--out', join(dir, 'x.json')], '--out must name a .jsonl file'],
    [['diff', good, good, '--out', join(dir, 'a b.jsonl')], '--out\'s name "a b" is not a change id'],
    [['diff', good, good, '--out', out, '--id', 'a/b'], '--id must be letters, digits, ., _ or -, got "a/b"'],
    [['diff', good, good, '--out', out, '--id', 'a'.repeat(101)], '--id is 101 characters long; a change id has at most 100'],
    [['diff', good, good, '--out', join(dir, `${'a'.repeat(101)}.jsonl`)], '--out\'s name is 101 characters long; a change id has at most 100: give one with --id'],
    [['apply', good, '--out', out], 'expected a snapshot and at least one change file'],
    [['apply', good, badChange], '--out FILE is required']
  ] as Array<[string[], string]>) {
    const result = await run(...args)
    t.equal(result.code, 2, args.join(' '))
    t.match(result.stderr, message)
  }
  t.match((await run('diff', '--help')).stdout, /^Usage: explore-replica diff OLD NEW --out CHANGES\.jsonl/)
  t.match((await run('apply', '--help')).stdout, /^Usage: explore-replica apply SNAPSHOT CHANGES\.jsonl… --out FILE/)
})

/** A two-item JSON Lines snapshot and a change file that deletes one, in a directory of their own. */
async function snapshotAndChange (t: Test): Promise<{ dir: string, snapshot: string, changes: string }> {
  const dir = await tempDir(t)
  const snapshot = join(dir, 'snap.jsonl')
  await writeFile(snapshot, toJsonLines({ languages: { en: [makeItem(1, '2024-01-01', []), makeItem(2, '2024-01-01', [])] } }))
  const changes = join(dir, 'chg-0001.jsonl')
  await writeFile(changes, `${JSON.stringify({ changes: 'explore', version: 1, id: 'chg-0001' })}\n${JSON.stringify({ op: 'delete', language: 'en', pk: 1 })}\n`)
  return { dir, snapshot, changes }
}

t.test('apply and diff never write over their inputs: an --out that is one by any path (resolved, a symbolic or hard link) is bad usage, exit 2', async t => {
  const { dir, snapshot, changes } = await snapshotAndChange(t)
  await symlink(changes, join(dir, 'to-changes.jsonl'))
  await link(snapshot, join(dir, 'also-snap.jsonl'))
  const inputs = async () => [await readFile(snapshot, 'utf8'), await readFile(changes, 'utf8')]
  const before = await inputs()
  for (const [out, input] of [
    [changes, `the change file ${changes}`],
    // Not a path join() would leave as it is; `sub` does not exist, so only the resolved paths tell.
    [`${dir}/sub/../snap.jsonl`, `the snapshot ${snapshot}`],
    [join(dir, 'to-changes.jsonl'), `the change file ${changes}`],
    [join(dir, 'also-snap.jsonl'), `the snapshot ${snapshot}`]
  ] as Array<[string, string]>) {
    const result = await run('apply', snapshot, changes, '--out', out)
    t.equal(result.code, 2, out)
    t.equal(result.stderr, `explore-replica apply: --out ${out} is ${input}: it would be overwritten; write the result to another file\nRun explore-replica apply --help for the options.\n`)
  }
  t.same(await inputs(), before, 'no input written over')
  const newAsOut = await run('diff', snapshot, join(dir, 'also-snap.jsonl'), '--out', join(dir, 'also-snap.jsonl'))
  t.equal(newAsOut.code, 2, 'diff too: its NEW snapshot as --out')
  // also-snap.jsonl is a hard link of snap.jsonl, the OLD one: named first.
  t.match(newAsOut.stderr, `--out ${join(dir, 'also-snap.jsonl')} is the old snapshot ${snapshot}: it would be overwritten`)
  t.same(await inputs(), before, 'still nothing written over')

  // A directory --out names that does not exist yet is created, as diff's and convert's --out are.
  const deeper = join(dir, 'new', 'deeper', 'merged.jsonl')
  const applied = await run('apply', snapshot, changes, '--out', deeper)
  t.equal(applied.code, 0, applied.stderr)
  t.ok((await stat(deeper)).isFile())
  const diffed = await run('diff', snapshot, deeper, '--out', join(dir, 'other', 'chg-0002.jsonl'))
  t.equal(diffed.code, 0, diffed.stderr)
})

t.test('a change file given as the snapshot, or a snapshot as a change file, is told so in one problem', async t => {
  const { dir, snapshot, changes } = await snapshotAndChange(t)
  const out = join(dir, 'merged.jsonl')
  const swapped = await run('apply', changes, snapshot, '--out', out)
  t.equal(swapped.code, 1)
  t.equal(swapped.stderr, `snapshot ${changes} is invalid (1 problem):\n  chg-0001.jsonl:1: this is a change file (its header says "changes"), not a snapshot: give it as a change file, after the snapshot it changes\nnothing written\n`)
  const twice = await run('apply', snapshot, snapshot, '--out', out)
  t.equal(twice.code, 1)
  t.equal(twice.stderr, `change file ${snapshot} is invalid (1 problem):\n  snap.jsonl:1: this is a snapshot (its header says "snapshot"), not a change file: give it as the snapshot, before its change files\nnothing written\n`)
  await t.rejects(readFile(out), { code: 'ENOENT' }, 'nothing written')
})
