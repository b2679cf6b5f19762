// Live reload with real files in real temporary directories: every way editors save, every kind of bad
// file, and readers hammering the route while the file flips.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { execFileSync } from 'node:child_process'
import { chmod, mkdir, open, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { ReloadOutcome } from '../src/snapshot/store/snapshot-store.js'
import { MOST_WAITING_REQUESTS } from '../src/http/http-server.js'
import { SHORTEST_QUIET_MS } from '../src/sources/watched-file.js'
import { collectAndFinalize, makeItem, memoryFreed, OUTPUT_WAIT_MS, tempDir, testStateDir, toJsonLines, versioned, type SnapshotDoc, reloadFile, readAnswers } from './helpers.js'

/** A snapshot format: its file name and how a document is written in it. */
interface Format {
  name: string
  file: string
  text: (doc: SnapshotDoc) => string
}

const JSON_FORMAT: Format = { name: 'JSON', file: 'snapshot.json', text: doc => JSON.stringify(doc) }
const FORMATS: Format[] = [JSON_FORMAT, { name: 'JSON Lines', file: 'snapshot.jsonl', text: doc => toJsonLines(doc) }]
const text = JSON_FORMAT.text

async function watchedApp (t: Test, format: Format = JSON_FORMAT, initial: SnapshotDoc = versioned(1)): Promise<{ app: FastifyInstance, file: string }> {
  const dir = await tempDir(t)
  const file = join(dir, format.file)
  await writeFile(file, format.text(initial))
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: testStateDir(file), watch: true, reloadDebounceMs: 40 } }))
  t.teardown(() => app.close())
  await app.snapshots.start()
  return { app, file }
}

/** The version served: from the titles, checking the page is wholly one version with a matching count. */
async function servedVersion (app: FastifyInstance): Promise<number> {
  const res = await app.inject('/en/api/internal/explore/?limit=100')
  const body = JSON.parse(res.body) as { count: number, results: Array<{ translated_title: string }> }
  const versions = new Set(body.results.map(r => Number(/^v(\d+) /.exec(r.translated_title)?.[1])))
  if (res.statusCode !== 200 || versions.size !== 1) throw new Error(`mixed or failed answer: ${res.statusCode} ${[...versions].join(',')}`)
  const version = [...versions][0] as number
  if (body.count !== 20 + version) throw new Error(`count ${body.count} does not belong to v${version}`)
  return version
}

async function status (app: FastifyInstance) {
  return JSON.parse((await app.inject('/-/status')).body)
}

/** Waits for reload outcomes until the served version is `version` (a slow copy may fail first). */
async function untilServed (app: FastifyInstance, version: number): Promise<ReloadOutcome[]> {
  const outcomes: ReloadOutcome[] = []
  for (;;) {
    // Listening before the version is read: a reload that ends while it is read is heard, not missed.
    const stop = new AbortController()
    const next = once(app.snapshots, 'reloaded', { signal: AbortSignal.any([stop.signal, AbortSignal.timeout(OUTPUT_WAIT_MS)]) })
    next.catch(() => {})
    if (await servedVersion(app) === version) {
      stop.abort()
      return outcomes
    }
    const [outcome] = await next.catch((error: Error) => { throw new Error(`v${version} not served; reloads so far: ${outcomes.join(', ') || 'none'} (${error.message})`) }) as [ReloadOutcome]
    outcomes.push(outcome)
  }
}

const nextReload = (app: FastifyInstance) => once(app.snapshots, 'reloaded').then(([outcome]) => outcome as ReloadOutcome)

t.test('/-/status describes the served snapshot', async t => {
  const { app, file } = await watchedApp(t)
  const body = await status(app)
  t.same(body.path, file)
  t.same(body.snapshot.generatedAt, '2026-01-01T00:00:01Z')
  t.ok(Date.parse(body.snapshot.loadedAt) > 0)
  t.same(body.snapshot.items, { en: 21 })
  const { images, ...reloads } = body.reloads
  t.same(reloads, { succeeded: 0, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null, refusals: { invalid: 0, too_big: 0 }, recentFailures: [], changeFiles: { applied: 0, refused: 0 } })
  t.match(images, { read: 0, refused: 0 }, 'parsed: its image is written in the background')
  t.equal(body.snapshot.imageMs, null)
})

for (const format of FORMATS) {
  t.test(`${format.name}: saved in place: the new file is served`, async t => {
    const { app, file } = await watchedApp(t, format)
    const reloaded = nextReload(app)
    await writeFile(file, format.text(versioned(2)))
    t.equal(await reloaded, 'loaded')
    t.equal(await servedVersion(app), 2)
    t.match(await status(app), { snapshot: { generatedAt: '2026-01-01T00:00:02Z', items: { en: 22 } }, reloads: { succeeded: 1, failed: 0 } })
  })

  t.test(`${format.name}: written to a temp file and renamed over: the new file is served`, async t => {
    const { app, file } = await watchedApp(t, format)
    const reloaded = nextReload(app)
    const temp = join(dirname(file), '.snapshot.json.tmp-123')
    await writeFile(temp, format.text(versioned(3)))
    await rename(temp, file)
    t.equal(await reloaded, 'loaded')
    t.equal(await servedVersion(app), 3)
    t.match(await status(app), { snapshot: { generatedAt: '2026-01-01T00:00:03Z', items: { en: 23 } }, reloads: { succeeded: 1, failed: 0 } })
  })

  t.test(`${format.name}: deleted and recreated at once: the new file is served`, async t => {
    const { app, file } = await watchedApp(t, format)
    await unlink(file)
    await writeFile(file, format.text(versioned(4)))
    await untilServed(app, 4)
    t.equal(await servedVersion(app), 4)
    t.match(await status(app), { snapshot: { generatedAt: '2026-01-01T00:00:04Z' }, reloads: { failed: 0, lastFailure: null } })
  })

  t.test(`${format.name}: deleted, then recreated later: the last good snapshot is served meanwhile`, async t => {
    const { app, file } = await watchedApp(t, format)
    const unlinked = once(app.snapshotWatcher!, 'file', { signal: AbortSignal.timeout(10_000) })
    await unlink(file)
    t.same(await unlinked, ['unlink'])
    t.equal(await servedVersion(app), 1, 'still served after the delete is seen')
    t.equal(await reloadFile(app), 'missing', 'a forced reload finds no file and changes nothing')
    t.equal(await servedVersion(app), 1)
    t.match(await status(app), { reloads: { succeeded: 0, failed: 0 } })
    const reloaded = nextReload(app)
    await writeFile(file, format.text(versioned(5)))
    t.equal(await reloaded, 'loaded')
    t.equal(await servedVersion(app), 5)
    t.match(await status(app), { snapshot: { generatedAt: '2026-01-01T00:00:05Z' }, reloads: { succeeded: 1, failed: 0 } })
  })

  t.test(`${format.name}: a slow copy in chunks: the complete file is served in the end`, async t => {
    const { app, file } = await watchedApp(t, format)
    const bytes = Buffer.from(format.text(versioned(6)))
    const handle = await open(file, 'w')
    const chunk = Math.ceil(bytes.length / 6)
    for (let at = 0; at < bytes.length; at += chunk) {
      await handle.write(bytes.subarray(at, at + chunk))
      await handle.sync()
      // The pace of a slow copy: longer than the debounce, so half-written files are seen and refused.
      await new Promise(resolve => setTimeout(resolve, 60))
    }
    await handle.close()
    await untilServed(app, 6)
    t.equal(await servedVersion(app), 6)
    // Half-written states may have been seen and refused on the way; the last load succeeded.
    const { snapshot, reloads } = await status(app)
    t.equal(snapshot.generatedAt, '2026-01-01T00:00:06Z')
    t.equal(reloads.failedInARow, 0)
    t.ok(reloads.succeeded >= 1, `${reloads.failed} half-written states refused, then served`)
  })

  t.test(`${format.name}: a burst of ten saves: the last wins, in a load or two per quiet time it lasts`, async t => {
    const { app, file } = await watchedApp(t, format)
    const began = performance.now()
    for (let version = 11; version <= 20; version++) await writeFile(file, format.text(versioned(version)))
    const burstMs = performance.now() - began
    await untilServed(app, 20)
    await app.snapshots.idle()
    t.equal(await servedVersion(app), 20)
    const { snapshot, reloads } = await status(app)
    t.equal(snapshot.generatedAt, '2026-01-01T00:00:20Z')
    // A load each time the saves pause for the watcher's quiet time: a burst a loaded machine stretches has more pauses.
    const most = 3 + Math.floor(burstMs / SHORTEST_QUIET_MS)
    const loads = reloads.succeeded + reloads.failed
    t.ok(loads <= most, `${loads} loads for ten saves in ${Math.round(burstMs)} ms`)
  })
}

const badFiles: Array<[Format, string, string | Buffer, RegExp]> = [
  [JSON_FORMAT, 'truncated', text(versioned(7)).slice(0, 200), /^snapshot\.json:\d+:\d+: not a snapshot document: the document ends inside /],
  [JSON_FORMAT, 'not JSON', 'this is not json', /^snapshot\.json:1:1: not a snapshot document: the document is not a JSON object$/],
  [JSON_FORMAT, 'empty', '', /^snapshot\.json: the file is empty$/],
  [JSON_FORMAT, 'schema-invalid', text({ languages: { en: [{ pk: 1 }] } }), /^snapshot\.json:\d+:\d+: languages\.en\[0\]\.is_translated: is required$/],
  [JSON_FORMAT, 'an impossible date', text({ languages: { en: [makeItem(1, '2024-02-30', [])] } }), /^snapshot\.json:\d+:\d+: languages\.en\[0\]\.backdate: "2024-02-30" is not a calendar date/],
  [JSON_FORMAT, 'a repeated pk', text({ languages: { en: [makeItem(1, '2024-01-01', []), makeItem(1, '2024-01-02', [])] } }), /^snapshot\.json:\d+:\d+: languages\.en\[1\]\.pk: 1 repeats languages\.en\[0\]$/]
]
const lines = FORMATS[1] as Format
badFiles.push(
  [lines, 'truncated', toJsonLines(versioned(7)).slice(0, 200), /^snapshot\.jsonl:2: not valid JSON: /],
  [lines, 'not JSON', 'this is not json', /^snapshot\.jsonl:1: not valid JSON: /],
  [lines, 'empty', '', /^the file is empty$/],
  [lines, 'schema-invalid', '{"language": "en", "pk": 1}\n', /^snapshot\.jsonl:1: is_translated: is required$/],
  [lines, 'an impossible date', toJsonLines({ languages: { en: [makeItem(1, '2024-02-30', [])] } }), /^snapshot\.jsonl:2:111: backdate: "2024-02-30" is not a calendar date/],
  [lines, 'a repeated pk', toJsonLines({ languages: { en: [makeItem(1, '2024-01-01', []), makeItem(1, '2024-01-02', [])] } }), /^snapshot\.jsonl:3: pk: 1 repeats line 2$/]
)

for (const [format, name, contents, problem] of badFiles) {
  t.test(`${format.name}: a bad file (${name}) is reported and the last good snapshot stays`, async t => {
    const { app, file } = await watchedApp(t, format)
    const reloaded = nextReload(app)
    await writeFile(file, contents)
    t.equal(await reloaded, 'failed')
    t.equal(await servedVersion(app), 1)
    const { reloads } = await status(app)
    t.match(reloads, { succeeded: 0, failed: 1, failedInARow: 1 })
    t.match(reloads.lastFailure.problems[0], problem)
    t.ok(Date.parse(reloads.lastFailure.at) > 0)
    // The editor fixes the file: served at once, failures in a row back to 0.
    const fixed = nextReload(app)
    await writeFile(file, format.text(versioned(8)))
    t.equal(await fixed, 'loaded')
    t.equal(await servedVersion(app), 8)
    t.match(await status(app), { reloads: { succeeded: 1, failed: 1, failedInARow: 0 } })
  })
}

t.test('an unreadable file is reported and the last good snapshot stays', async t => {
  const { app, file } = await watchedApp(t)
  const reloaded = nextReload(app)
  if (process.getuid?.() === 0) {
    // root reads any file whatever its mode: a directory in the file's place is unreadable as a file.
    await rm(file)
    await mkdir(file)
  } else {
    await writeFile(file, text(versioned(9)))
    await chmod(file, 0o000)
  }
  t.equal(await reloaded, 'failed')
  t.equal(await servedVersion(app), 1)
  t.match((await status(app)).reloads.lastFailure.problems[0], /^(permission denied|the path is a directory, not a file)$/)
})

t.test('a named pipe, a link to nothing or a loop of links in the file\'s place is refused, never opened; a good file then loads', async t => {
  const dir = await tempDir(t)
  const file = join(dir, 'snapshot.json')
  await writeFile(file, text(versioned(1)))
  // Reloads asked for one at a time (as SIGHUP asks): no watcher's reload of the fault before.
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: testStateDir(file), watch: false } }))
  t.teardown(() => app.close())
  await app.snapshots.start()
  const faults: Array<[string, () => Promise<void>, string]> = [
    // Opened as before, a pipe waited for a writer for ever: no later reload ran, and SIGTERM never ended it.
    ['a named pipe', async () => { execFileSync('mkfifo', [file]) }, 'a named pipe, not a file'],
    ['a link to nothing', async () => { await symlink(join(dir, 'nowhere.json'), file) }, 'a link to a file that does not exist'],
    ['a loop of links', async () => {
      await symlink(file, join(dir, 'other.json'))
      await symlink(join(dir, 'other.json'), file)
    }, 'a loop of symbolic links']
  ]
  for (const [name, make, problem] of faults) {
    await rm(file)
    await make()
    t.equal(await reloadFile(app), 'failed', name)
    t.same((await status(app)).reloads.lastFailure.problems, [problem])
    t.equal(await servedVersion(app), 1, 'the last good snapshot stays')
  }
  await rm(file)
  await writeFile(file, text(versioned(2)))
  t.equal(await reloadFile(app), 'loaded')
  t.equal(await servedVersion(app), 2)
})

for (const format of FORMATS) {
  t.test(`${format.name}: readers never see a mix: every answer comes wholly from one snapshot`, async t => {
    const { app, file } = await watchedApp(t, format, versioned(1, { count: 21 }))
    const flipping = { on: true }
    let answers = 0
    const versionsSeen = new Set<number>()
    const reader = async () => {
      while (flipping.on) {
        for (const url of ['/en/api/internal/explore/?limit=100', '/en/api/internal/explore/?companies=1&limit=5&offset=2', '/en/api/internal/explore/?companies=0&companies=2']) {
          const res = await app.inject(url)
          // Failed, not counted, as below: thousands of passing assertions are only output for tap to parse.
          if (res.statusCode !== 200) t.fail(`${url} answered ${res.statusCode}`)
          const body = JSON.parse(res.body) as { count: number, results: Array<{ translated_title: string }> }
          const versions = new Set(body.results.map(r => Number(/^v(\d+) /.exec(r.translated_title)?.[1])))
          if (versions.size !== 1) t.fail(`a page mixes versions ${[...versions]}`)
          const version = [...versions][0] as number
          versionsSeen.add(version)
          // Each version has its own size, so a count from one snapshot and items from another would show.
          const size = 20 + version
          const companies = url.includes('companies=1') ? [1] : url.includes('companies=0') ? [0, 2] : [0, 1, 2]
          const expected = Array.from({ length: size }, (_, i) => i % 3).filter(c => companies.includes(c)).length
          if (body.count !== expected) t.fail(`count ${body.count} is not v${version}'s ${expected} for ${url}`)
          answers++
        }
        // inject resolves on microtasks; without a turn of the event loop the readers would starve the
        // watcher and its timers (a real server's sockets yield by themselves).
        await new Promise(resolve => setImmediate(resolve))
      }
    }
    const readers = Array.from({ length: 6 }, reader)
    for (let flip = 0; flip < 12; flip++) {
      const version = flip % 2 === 0 ? 2 : 1
      await writeFile(file, format.text(versioned(version)))
      // A reload may read the file between writeFile's truncate and its write (readers keep the loop
      // busy); that load is superseded or fails, and the write's own event brings the version.
      const outcomes = await untilServed(app, version)
      t.equal(await servedVersion(app), version, `flip ${flip} served after reloads: ${outcomes.join(', ')}`)
    }
    flipping.on = false
    await Promise.all(readers)
    t.ok(answers > 12, `${answers} answers during 12 flips`)
    t.same([...versionsSeen].sort(), [1, 2])
  })
}

t.test('once the app is closed, a write to its snapshot file reloads nothing', async t => {
  const { app, file } = await watchedApp(t) // debounce 40 ms
  await app.close()
  let reloads = 0
  app.snapshots.on('reloaded', () => reloads++)
  // A witness: a second app watching the same file, with a longer debounce. Both watchers get the same
  // file system events, so by the time the witness has seen the write, waited out its 200 ms and loaded
  // the file, the closed app's watcher, had it still been open, would have fired 160 ms earlier.
  const witness = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath: file, stateDir: testStateDir(file), watch: true, reloadDebounceMs: 200 } }))
  t.teardown(() => witness.close())
  await witness.snapshots.start()
  const witnessed = nextReload(witness)
  await writeFile(file, text(versioned(3)))
  t.equal(await witnessed, 'loaded', 'an open watcher saw the write and loaded it')
  // A reload the closed app had started would have finished here.
  await app.snapshots.idle()
  t.equal(reloads, 0, 'the closed app reloaded nothing')
  t.equal(app.snapshots.current()!.info.generatedAt, '2026-01-01T00:00:01Z', 'and still holds the first snapshot')
  // The store itself still works: a forced reload loads the file.
  t.equal(await reloadFile(app), 'loaded')
  t.equal(reloads, 1, 'only the forced reload ran')
})

t.test('answers still on their way when a reload retires their model arrive whole; its memory is freed after', async t => {
  // 160 items of ~100 KB: a page of 100 is ~10 MB, more than the sockets' buffers hold while the client does not
  // read, so the first answer is still being sent; the pipelined requests behind it wait (http-server.ts).
  const abstract = 'x'.repeat(100_000)
  const count = 160
  const en = Array.from({ length: count }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: abstract }))
  const { app, file } = await watchedApp(t, JSON_FORMAT, { languages: { en } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const old = app.snapshots.current()!
  const offsets = Array.from({ length: MOST_WAITING_REQUESTS }, (_, i) => i * 10)
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.pause()
  const answering = firstAnswerWritten(app)
  // Pages never asked for before: sent as views of the model's memory, not copies (the page cache keeps a
  // page only the second time it is made).
  socket.write(offsets.map(offset => `GET /en/api/internal/explore/?limit=100&offset=${offset} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(''))
  await answering
  let freed = false
  old.memory.freed.then(() => { freed = true }, () => {})

  await writeFile(file, text(versioned(2)))
  t.equal(await reloadFile(app), 'loaded')
  await new Promise(resolve => setImmediate(resolve))
  await collectAndFinalize()
  t.equal(old.memory.status, 'released', 'the retired model is no longer read')
  t.equal(freed, false, 'but its memory stays while an answer still sends from it')

  socket.resume()
  const bodies = await readAnswers(socket, offsets.length)
  socket.destroy()
  // The requests waiting behind the first answer are answered once it has gone, from the new snapshot: each page is
  // wholly one snapshot's.
  let fromOld = 0
  bodies.forEach((body, i) => {
    const offset = offsets[i] as number
    const page = JSON.parse(body) as { count: number, results: Array<{ pk: number }> }
    if (page.count === 22) return
    fromOld++
    const expected = Array.from({ length: Math.min(100, count - offset) }, (_, k) => count - offset - k)
    if (page.count !== count || JSON.stringify(page.results.map(item => item.pk)) !== JSON.stringify(expected)) {
      t.fail(`the page at offset ${offset} is not the old snapshot's`)
    }
  })
  t.equal(fromOld, 1, 'the first page was sent from the retired model, the others from the new one')
  t.equal(bodies.length, offsets.length, 'every answer arrived whole')
  await memoryFreed(old.memory)
  t.equal(old.memory.status, 'released', 'and the old memory was collected once it had')
  t.equal(await servedVersion(app), 2)
})

/** Settles once the server has written the head of the first answer it is asked for (from now on). */
async function firstAnswerWritten (app: FastifyInstance): Promise<void> {
  const [, response] = await once(app.server, 'request') as [IncomingMessage, ServerResponse]
  for (let turns = 0; !response.headersSent; turns++) {
    if (turns === 100_000) throw new Error('the server never began to answer')
    await new Promise(resolve => setImmediate(resolve))
  }
}

t.test('a client that leaves with requests still waiting does not keep the retired model\'s memory', async t => {
  const abstract = 'x'.repeat(100_000)
  const en = Array.from({ length: 160 }, (_, i) => makeItem(i + 1, '2024-01-01', [1], { translated_abstract: abstract }))
  const { app, file } = await watchedApp(t, JSON_FORMAT, { languages: { en } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const old = app.snapshots.current()!
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.pause()
  const answering = firstAnswerWritten(app)
  socket.write(Array.from({ length: MOST_WAITING_REQUESTS }, (_, i) => `GET /en/api/internal/explore/?limit=100&offset=${i * 10} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(''))
  await answering
  // Gone with the first answer half sent and the others waiting behind it.
  socket.destroy()
  await writeFile(file, text(versioned(2)))
  t.equal(await reloadFile(app), 'loaded')
  await memoryFreed(old.memory)
  t.pass('the half-sent answer\'s views went with the connection: the memory was collected')
})
