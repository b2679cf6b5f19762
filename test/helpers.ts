// Shared test fixtures: items and snapshots built in code, written to real temporary directories, and
// the app built from the same options the server uses.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import type { Socket } from 'node:net'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import type { SnapshotItem } from '../src/schemas/snapshot.js'
import type { ItemMemory } from '../src/snapshot/model/item-memory.js'
import type { SnapshotModel } from '../src/snapshot/model/snapshot-model.js'
import { SnapshotLoader, loadSnapshotFile } from '../src/snapshot/load/load-snapshot.js'
import { SnapshotError } from '../src/errors.js'
import { WatchedFile } from '../src/sources/watched-file.js'
import type { ReloadOutcome, SnapshotStore } from '../src/snapshot/store/snapshot-store.js'
import type { ParsePool } from '../src/snapshot/load/parse-pool.js'
import processOnSpawn from 'process-on-spawn'
import { setMemoryPolicy } from '../src/snapshot/memory-policy.js'

// The tests retire hundreds of tiny models: each one's 128 MiB collection hint and the major collection it starts
// were a quarter of the reload tests' CPU (ADR 044). Where a test waits for memory freed, it collects itself
// (memoryFreed); retired-model.test.ts turns the hint back on, and the end-to-end tests run it as shipped.
setMemoryPolicy({ collectionHint: false })

export function makeItem (pk: number, backdate: string, companies: number[], extra: Partial<SnapshotItem> & Record<string, unknown> = {}): SnapshotItem {
  return {
    pk,
    is_translated: true,
    translated_languages: [],
    translated_title: `Item ${pk}`,
    backdate,
    translated_abstract: '',
    display_image: null,
    series: null,
    company_response_summary: { responses: 0, non_responses: 0 },
    company_response_responded: null,
    responded_to_article: null,
    translated_url: `/en/latest-news/item-${pk}/`,
    stories: [],
    story_item_count: null,
    content_type_display: 'Article',
    untranslated_content_type: 'articlepage',
    companies,
    ...extra
  }
}

export interface SnapshotDoc {
  generated_at?: string
  languages: Record<string, unknown[]>
  [key: string]: unknown
}

/**
 * 25 `en` items over 5 days (5 share each day), pks 1–25: company 7 has every third item, company 8
 * the rest, company 9 the items whose pk is a multiple of 5. `es` has 2 items, `fr` none.
 */
export function smallSnapshot (): SnapshotDoc {
  const en = Array.from({ length: 25 }, (_, i) => {
    const pk = i + 1
    const companies = [pk % 3 === 0 ? 7 : 8]
    if (pk % 5 === 0) companies.push(9)
    return makeItem(pk, `2024-01-${String(1 + (i % 5)).padStart(2, '0')}`, companies)
  })
  const es = [makeItem(101, '2023-05-01', [7]), makeItem(102, '2023-06-01', [8])]
  return { generated_at: '2026-11-20T09:30:00Z', languages: { en, es, fr: [] } }
}

/**
 * A snapshot document as JSON Lines: a header (with `generated_at` and every language, unless `header` is
 * false), then one item per line, each with its `language`.
 */
export function toJsonLines (doc: SnapshotDoc, { header = true, eol = '\n' }: { header?: boolean, eol?: string } = {}): string {
  const lines: string[] = []
  if (header) {
    lines.push(JSON.stringify({ snapshot: 'explore', version: 1, ...(doc.generated_at === undefined ? {} : { generated_at: doc.generated_at }), languages: Object.keys(doc.languages) }))
  }
  for (const [language, items] of Object.entries(doc.languages)) {
    for (const item of items) lines.push(JSON.stringify({ language, ...(item as object) }))
  }
  return lines.map(line => `${line}${eol}`).join('')
}

/**
 * A snapshot whose every title (`v3 item 7`) and generated_at name its version: `count` items in `en`,
 * 20 + version unless given, so a page's count tells the version too.
 */
export function versioned (version: number, { count = 20 + version, abstract = '' }: { count?: number, abstract?: string } = {}): SnapshotDoc {
  const en = Array.from({ length: count }, (_, i) => makeItem(i + 1, `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`, [i % 3], { translated_title: `v${version} item ${i + 1}`, translated_abstract: abstract }))
  return { generated_at: `2026-01-01T00:00:${String(version).padStart(2, '0')}Z`, languages: { en } }
}

/**
 * A retired model's memory (or every one of several) freed within a few full collections, or the test fails with what leaked. Shared
 * chunks go only when the collector takes their last view; a view still held (an answer's, a cache's) is a
 * leak no collection mends, and waiting for it would end only at tap's timeout, saying nothing.
 */
export async function memoryFreed (memory: ItemMemory | ItemMemory[], what = 'the retired model\'s memory', collections = 20): Promise<void> {
  const memories = [memory].flat()
  // Counted down as each is freed, between the collections below.
  const state = { left: memories.length }
  const settled = Promise.all(memories.map(async each => { await each.freed; state.left-- }))
  for (let i = 0; i < collections && state.left > 0; i++) {
    await collectAndFinalize()
    await Promise.race([settled, new Promise(resolve => setTimeout(resolve, 50))])
  }
  if (state.left > 0) {
    const status = memories.length === 1 ? memories[0]?.status : `${state.left} of ${memories.length} not freed`
    throw new Error(`${what} was not freed after ${collections} full collections (${status}): something still holds a view of its chunks`)
  }
}

/** A full collection now: the suite runs with --expose-gc (package.json, tap's node-arg). */
export function collectGarbage (): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run the tests with --expose-gc (npm test does)')
  gc()
}

/**
 * A full collection, and its finalizers run: a sentinel object dropped before it is seen finalized, then
 * two more turns (V8 runs one registry's callbacks per task). What is still unfinalized after this is held.
 */
export async function collectAndFinalize (): Promise<void> {
  let finalized = (): void => {}
  const seen = new Promise<void>(resolve => { finalized = resolve })
  const registry = new FinalizationRegistry<null>(() => finalized())
  ;(() => { registry.register({}, null) })()
  collectGarbage()
  // The registry referenced until then: one collected itself would never call back.
  await seen.then(() => registry)
  for (let turn = 0; turn < 2; turn++) await new Promise(resolve => setImmediate(resolve))
}

/** A TCP port free on 127.0.0.1 just now (for a process that must be told its port: nginx, moto). */
export async function freePort (): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/** A fresh temporary directory, removed when the test ends. */
export async function tempDir (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'explore-test-'))
  t.teardown(async () => {
    const { rm } = await import('node:fs/promises')
    await rm(dir, { recursive: true, force: true })
  })
  return dir
}

export async function writeSnapshot (t: Test, doc: unknown, name = 'snapshot.json'): Promise<string> {
  const file = join(await tempDir(t), name)
  await writeFile(file, typeof doc === 'string' ? doc : JSON.stringify(doc))
  return file
}

/**
 * A snapshot's model, through the path production loads it by: the document written to a file, then
 * loaded. The file is removed at once; `name` gives the format by its extension.
 */
export async function modelOf (doc: unknown, name = 'snapshot.json'): Promise<SnapshotModel> {
  const dir = await mkdtemp(join(tmpdir(), 'explore-model-'))
  const file = join(dir, name)
  try {
    await writeFile(file, typeof doc === 'string' || Buffer.isBuffer(doc) ? doc : JSON.stringify(doc))
    return await loadSnapshotFile(file)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * The problems a load reports for `doc` written to a file named `name` (the format by its extension);
 * fails the test if the file is accepted.
 */
export async function problemsOf (doc: unknown, name = 'test.json', loader?: SnapshotLoader): Promise<readonly string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'explore-problems-'))
  const file = join(dir, name)
  try {
    await writeFile(file, typeof doc === 'string' || Buffer.isBuffer(doc) ? doc : JSON.stringify(doc))
    await (loader ?? new SnapshotLoader()).load(file)
  } catch (error) {
    if (error instanceof SnapshotError) return error.problems
    throw error
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  throw new Error('the snapshot was accepted')
}

/** `pool`, used for files of any size (the process's own starts at THREADS_FROM_BYTES): a test's files are small. */
export function poolForAnySize (pool: ParsePool): ParsePool {
  return Object.assign(Object.create(pool) as ParsePool, {
    parserFor: async (_bytes: number, serving: boolean, onFallback?: (reason: string) => void) => await pool.parserFor(Infinity, serving, onFallback),
    // The pool's own fields, not copies on this object.
    close: async () => { await pool.close() }
  })
}

/** Problems without the `file:line:column: ` that starts each (tests of the rules rather than the places). */
export function withoutPlace (problems: readonly string[]): string[] {
  return problems.map(line => line.replace(/^[^:\s]+\.(?:json|jsonl|ndjson):\d+(?::\d+)?: /, ''))
}

/**
 * A test app's STATE_DIR: beside its snapshot, removed with it. Without one, an app keeps its state in the user's
 * cache, one directory per snapshot path, and each test's path is new (.ci/run fails a run that leaves any).
 */
export function testStateDir (snapshotPath: string): string {
  return join(dirname(snapshotPath), 'state')
}

/** The app on a snapshot document, its snapshot loaded, closed when the test ends. */
export async function buildTestApp (t: Test, doc: unknown = smallSnapshot(), overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const snapshotPath = await writeSnapshot(t, doc)
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotPath, watch: false, stateDir: testStateDir(snapshotPath), ...overrides } }))
  t.teardown(async () => { await closeApp(app) })
  // As server.ts does once it listens: the tests start from a served snapshot.
  await app.snapshots.start()
  return app
}

/**
 * `app.close()`, failing with what still holds the process if it has not ended within `withinMs`: a
 * teardown in fast-path.test.ts once waited out tap's 240 s and was never seen again (60 runs on a loaded
 * machine); should it recur, this says what it waited for instead of a bare timeout.
 */
export async function closeApp (app: FastifyInstance, withinMs = 60_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      app.server.getConnections((_error, connections) => {
        reject(new Error(`app.close() has not ended after ${withinMs / 1000} s; ${connections} connections open; ` +
          `active: ${process.getActiveResourcesInfo().join(', ')}`))
      })
    }, withinMs)
  })
  try {
    await Promise.race([app.close(), late])
  } finally {
    clearTimeout(timer)
  }
}

/** The app's snapshot file and change files served again, as the watcher and SIGHUP have it served. */
export async function reloadFile (app: FastifyInstance): Promise<ReloadOutcome | 'held'> {
  if (!(app.snapshotSource instanceof WatchedFile)) throw new Error('the app follows a URL, not a file')
  return await app.snapshotSource.load()
}

/** The store's own file served again, alone. */
export async function serveFile (store: SnapshotStore, snapshot = store.file): Promise<ReloadOutcome> {
  return await store.serve({ snapshot, changes: [] })
}

export const EXPLORE = '/en/api/internal/explore/'

/**
 * The environment for a Node process a test starts (the real server, the checker), with its coverage
 * turned off: such a child runs the build (dist/, which `npm run test:e2e` makes first: a child is up in
 * ~0.2 s, where one through tsx compiled src/ for ~1 s), and its coverage of the same code, compiled
 * differently, corrupts tap's merged report (seen: every file at 100%, or only one file left). The
 * exclusion pattern, set to match every file, keeps it out of the report, and tap's hooks out of it (below).
 */
export function childEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  builtChecked ??= builtIsStale()
  if (builtChecked) throw new Error('dist/ is missing or older than src/: run npm run build first (npm run test:e2e does)')
  return { ...process.env, XDG_CACHE_HOME: testCacheHome(), [COVERAGE_EXCLUDE]: OUTSIDE_COVERAGE, ...extra }
}

const COVERAGE_EXCLUDE = '_TAPJS_PROCESSINFO_COV_EXCLUDE_'
const OUTSIDE_COVERAGE = '/./'
// tap's processinfo adds its module hooks to each child's NODE_OPTIONS as it is spawned (process-on-spawn): in
// a child outside coverage they only cost, 0.4 s of a Node 20 process's start (ADR 044). Listeners run in
// order: this one, added after tap's, takes them out again.
processOnSpawn.addListener(child => {
  if (child.env[COVERAGE_EXCLUDE] !== OUTSIDE_COVERAGE || child.env.NODE_OPTIONS === undefined) return
  const options = (child.env.NODE_OPTIONS.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [])
    .filter(option => !/^"?--(import|loader|experimental-loader)=\S*\/@tapjs\/processinfo\//.test(option))
  if (options.length > 0) child.env.NODE_OPTIONS = options.join(' ')
  else delete child.env.NODE_OPTIONS
})

let builtChecked: boolean | undefined

const ROOT = join(import.meta.dirname, '..')
/** The built entries (`npm run build`) the end-to-end tests start: `node dist/server.js`, `node dist/cli/main.js`. */
export const BUILT_SERVER = join(ROOT, 'dist', 'server.js')
export const BUILT_CLI = join(ROOT, 'dist', 'cli', 'main.js')

/** Whether dist/ is missing or older than a file of src/: a child started from it would test old code. */
export function builtIsStale (): boolean {
  const built = statSync(BUILT_SERVER, { throwIfNoEntry: false })
  if (built === undefined) return true
  const sources = readdirSync(join(ROOT, 'src'), { withFileTypes: true, recursive: true }).filter(entry => entry.isFile())
  return sources.some(entry => statSync(join(entry.parentPath, entry.name)).mtimeMs > built.mtimeMs)
}

let cacheHome: string | undefined

/**
 * The user's cache as a started server sees it: one per test file, removed when it ends. A server given no
 * STATE_DIR keeps one per snapshot path there, and each test's snapshot has a new path: in the real
 * ~/.cache, every run left hundreds behind (2 GB seen).
 */
function testCacheHome (): string {
  if (cacheHome === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'explore-test-cache-'))
    process.once('exit', () => { rmSync(made, { recursive: true, force: true }) })
    cacheHome = made
  }
  return cacheHome
}

/** How long a test waits for a process to print what it expects before failing with what it printed. */
export const OUTPUT_WAIT_MS = 90_000

/** A spawned process's output as it comes (stdout, and stderr after it in arrival order). */
export interface ChildOutput {
  text: () => string
  /**
   * Resolves once `pattern` has been printed `times` times in all, counted from the start or from `from`
   * (an offset into `text()`). Rejects with the output if the process exits first or OUTPUT_WAIT_MS pass: a
   * missed line fails its test, with what was printed, instead of holding the file until tap's timeout.
   */
  logged: (pattern: RegExp, times?: number, from?: number) => Promise<void>
  /**
   * Its API's origin, once it says it listens: a server given port 0 has no port a test must guess. A port a
   * test picked is free only until someone else picks it too.
   */
  origin: () => Promise<string>
}

// Up to the line's next character: a read may end inside the port.
const LISTENING_AT = /"msg":"Server listening at (http:\/\/[^,"]+)[,"]/

/**
 * Asks `read` again (a turn of the event loop apart) until it gives something other than undefined;
 * rejects naming `what` after OUTPUT_WAIT_MS. For states a process reaches on
 * its own (a worker started again), where no event says so.
 */
export async function eventually<T> (what: string, read: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + OUTPUT_WAIT_MS
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`not within ${OUTPUT_WAIT_MS / 1000} s: ${what}`)
    await new Promise(resolve => setImmediate(resolve))
  }
}

export function watchOutput (child: ChildProcess): ChildOutput {
  let text = ''
  let exited = child.exitCode !== null || child.signalCode !== null
  const listeners = new Set<() => void>()
  const seen = (chunk: Buffer | string): void => {
    text += String(chunk)
    for (const check of [...listeners]) check()
  }
  child.stdout?.on('data', seen)
  child.stderr?.on('data', seen)
  // 'close', not 'exit': what the process printed last may still be on its way when it has exited.
  child.once('close', () => {
    exited = true
    for (const check of [...listeners]) check()
  })
  const logged = (pattern: RegExp, times = 1, from = 0): Promise<void> => new Promise((resolve, reject) => {
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`)
    const done = (error?: Error): void => {
      listeners.delete(check)
      clearTimeout(timer)
      if (error === undefined) resolve()
      else reject(error)
    }
    const check = (): void => {
      if ((text.slice(from).match(global) ?? []).length >= times) done()
      else if (exited) done(new Error(`the process exited before printing ${String(pattern)} ${times} time(s):\n${text}`))
    }
    const timer = setTimeout(() => { done(new Error(`${String(pattern)} not printed ${times} time(s) within ${OUTPUT_WAIT_MS / 1000} s:\n${text}`)) }, OUTPUT_WAIT_MS)
    listeners.add(check)
    check()
  })
  const origin = async (): Promise<string> => {
    await logged(LISTENING_AT)
    return (LISTENING_AT.exec(text) as RegExpExecArray)[1] as string
  }
  return { text: () => text, logged, origin }
}

/**
 * Sends bytes as they are on a new connection to a listening app and resolves with everything it
 * answers: for requests no HTTP client would send (two Host headers, raw non-ASCII in the target).
 */
export async function rawRequest (app: FastifyInstance, request: Buffer | string): Promise<string> {
  if (app.server.address() === null) await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const { connect } = await import('node:net')
  return new Promise<string>((resolve, reject) => {
    // Decoded once: a character split across two chunks would be garbled decoded chunk by chunk.
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => socket.end(request))
    socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()))
    socket.on('error', reject)
  })
}

// Debian's own Chromium, not one Playwright downloads: CI installs it with apt-get and nothing is fetched
// at test time. No sandbox: CI runs as root in a container, where Chromium's sandbox cannot start. The
// other flags keep the browser from reaching the network on its own (updates, sync, QUIC probes).
export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** false where Debian's Chromium is installed; otherwise the reason the browser test of `what` is skipped. */
export function chromiumSkip (what: string): false | string {
  return existsSync(CHROMIUM) ? false : `Debian chromium is not installed (apt-get install chromium); the browser test of ${what} is skipped`
}

/** The reference for positions in a file: 1 + the newlines before `offset`; 1 + the UTF-8 lead bytes since the last one. */
export function positionOf (raw: Buffer, offset: number): { line: number, column: number } {
  let line = 1
  let column = 1
  for (let i = 0; i < offset; i++) {
    const byte = raw[i] as number
    if (byte === 0x0a) {
      line++
      column = 1
    } else if ((byte & 0xc0) !== 0x80) column++
  }
  return { line, column }
}

/**
 * `count` requests over real HTTP to the app (listening from the first call) or a port, `connections` kept alive;
 * `make` gives the n-th one's path and headers (Host: replica.test unless given). Resolves with the statuses, in order.
 */
export async function askMany (
  to: FastifyInstance | number, count: number, make: (n: number) => { path: string, headers?: Record<string, string>, method?: string },
  connections = 4
): Promise<number[]> {
  if (typeof to !== 'number' && to.server.address() === null) await to.listen({ port: 0, host: '127.0.0.1' })
  const port = typeof to === 'number' ? to : (to.server.address() as { port: number }).port
  const { Agent, request } = await import('node:http')
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const statuses: number[] = []
  let next = 0
  const one = async (): Promise<void> => {
    while (next < count) {
      const n = next++
      const { path, headers = {}, method = 'GET' } = make(n)
      statuses[n] = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method, path, headers: { host: 'replica.test', ...headers }, agent }, res => {
          res.resume()
          res.on('end', () => resolve(res.statusCode as number))
        })
        req.on('error', reject)
        req.end()
      })
    }
  }
  try {
    await Promise.all(Array.from({ length: connections }, one))
  } finally {
    agent.destroy()
  }
  return statuses
}

/** Reads `count` pipelined HTTP answers with a Content-Length from a socket; their bodies, in order. */
export async function readAnswers (socket: Socket, count: number): Promise<string[]> {
  const bodies: string[] = []
  let buffered = Buffer.alloc(0)
  for await (const chunk of socket as AsyncIterable<Buffer>) {
    buffered = Buffer.concat([buffered, chunk])
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n')
      if (end === -1) break
      const length = Number(/content-length: (\d+)/i.exec(buffered.toString('latin1', 0, end))?.[1])
      if (buffered.length < end + 4 + length) break
      bodies.push(buffered.toString('utf8', end + 4, end + 4 + length))
      buffered = buffered.subarray(end + 4 + length)
    }
    if (bodies.length === count) break
  }
  return bodies
}
