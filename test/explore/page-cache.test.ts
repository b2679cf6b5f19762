import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { DOORKEEPER_MAX_BYTES, MAX_KEY_LENGTH, PAGE_ENTRY_BYTES, PageCache, pageCacheOf, type CachedPage } from '../../src/explore/page-cache.js'
import { askMany, buildTestApp, EXPLORE, rawRequest, smallSnapshot, reloadFile } from '../helpers.js'

/**
 * The one look inside. Whether an answer came from the page cache cannot be seen over HTTP (that is the
 * point of the cache), so this makes it visible: from now on the served snapshot cannot make a page
 * (it knows no language), so a request that still gets its page (or its 304) got it from the cache, and
 * one whose page is not cached gets a 404. Re-point this if pages stop asking the model for a language.
 */
/** What the page answer does with a page it makes: kept when the cache wants it. */
function offerTo (cache: PageCache, key: string, page: CachedPage): void {
  if (cache.wants(key)) cache.keep(key, page)
}

function stopMakingPages (app: FastifyInstance): void {
  Object.defineProperty(app.snapshots.current(), 'language', { value: () => undefined })
}

/** What a client sees of an answer over real HTTP, but the date and the connection's headers. */
interface Seen {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** One request on its own connection to the app (listening from the first call); Host: replica.test unless given. */
async function fetchSeen (app: FastifyInstance, url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Seen> {
  if (app.server.address() === null) await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: url, headers: { host: 'replica.test', ...headers }, agent: false }, res => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => {
        const { date, connection, 'keep-alive': keepAlive, ...rest } = res.headers
        resolve({ status: res.statusCode as number, headers: rest, body })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

const page = (bytes: number) => ({ status: 200 as const, headers: ['content-length', String(bytes)], body: Buffer.alloc(bytes) })

/**
 * A cache with room for `bytes` of bodies and keys, each kept page's entry counted besides; its doorkeeper's hashes
 * seeded so that no two keys of these tests share one (a shared hash lets a page in early, by design).
 */
const cacheFor = (bytes: number, pages: number): PageCache => new PageCache(bytes + pages * PAGE_ENTRY_BYTES, 1)

t.test('the cache keeps pages within its byte budget, oldest out first', async t => {
  const cache = cacheFor(100, 2)
  // Each page is offered twice: the doorkeeper lets a page in the second time it is made.
  const offer = (key: string, bytes: number) => { offerTo(cache, key, page(bytes)); offerTo(cache, key, page(bytes)) }
  offer('a', 40)
  offer('b', 40)
  t.equal(cache.size, 2)
  offer('c', 40)
  t.equal(cache.get('a'), undefined, 'the oldest made room')
  t.ok(cache.get('b') && cache.get('c'))
  offer('huge', 100 + PAGE_ENTRY_BYTES)
  t.equal(cache.get('huge'), undefined, 'a page larger than the budget is not kept')
  const first = cache.get('b')
  offerTo(cache, 'b', page(10))
  t.equal(cache.get('b'), first, 'a key is filled once')
})

t.test('a page asked for once is not kept', async t => {
  const cache = cacheFor(1000, 1)
  offerTo(cache, 'once', page(10))
  t.equal(cache.get('once'), undefined)
  offerTo(cache, 'once', page(10))
  t.ok(cache.get('once'), 'the second time it is')
})

t.test('wants: asked before a page is made, so one not kept can be sent in parts', async t => {
  const cache = cacheFor(1000, 1)
  t.equal(cache.wants('k'), false, 'the first time: remembered, not wanted')
  t.equal(cache.get('k'), undefined)
  t.equal(cache.wants('k'), true, 'the second time')
  cache.keep('k', page(10))
  t.ok(cache.get('k'))
  t.equal(cache.wants('k'), false, 'not once it is kept')
})

/** Everything a client sees of an answer, but the date. */
const seen = (res: { statusCode: number, headers: Record<string, unknown>, body: string }) => {
  const { date, ...headers } = res.headers
  return { status: res.statusCode, headers, body: res.body }
}

t.test('a cached answer is exactly the answer', async t => {
  const cached = await buildTestApp(t)
  const uncached = await buildTestApp(t, smallSnapshot(), { pageCacheMb: 0 })
  for (const url of [`${EXPLORE}?companies=7`, `${EXPLORE}?companies=7&companies=9&limit=3&offset=2&x=%20y`, '/es/api/internal/explore/']) {
    for (const headers of [{}, { accept: 'application/json; indent=2' }, { host: 'other.test:8080' }]) {
      const expected = seen(await uncached.inject({ url, headers }))
      t.same(seen(await cached.inject({ url, headers })), expected, `first: ${url} ${JSON.stringify(headers)}`)
      t.same(seen(await cached.inject({ url, headers })), expected, `second, kept: ${url} ${JSON.stringify(headers)}`)
      t.same(seen(await cached.inject({ url, headers })), expected, `from the cache: ${url} ${JSON.stringify(headers)}`)
      const head = await cached.inject({ method: 'HEAD', url, headers })
      t.equal(head.body, '')
      t.equal(head.headers['content-length'], String(Buffer.byteLength(expected.body)))
    }
  }
})

t.test('an empty header is not an absent one: Accept: "" stays a 406 after the page is cached', async t => {
  const app = await buildTestApp(t)
  for (let i = 0; i < 3; i++) t.equal((await app.inject(EXPLORE)).statusCode, 200)
  const res = await app.inject({ url: EXPLORE, headers: { accept: '' } })
  t.equal(res.statusCode, 406)
  for (let i = 0; i < 3; i++) await app.inject({ url: EXPLORE, headers: { accept: 'text/html' } })
  t.equal((await app.inject(EXPLORE)).statusCode, 200)
})

t.test('a conditional request for a cached page is answered from the cache: 304 for its tag, the page for another', async t => {
  const app = await buildTestApp(t)
  const url = `${EXPLORE}?companies=8`
  const first = await fetchSeen(app, url)
  t.equal(first.status, 200)
  t.same(await fetchSeen(app, url), first, 'the second answer: made again, and kept')
  stopMakingPages(app)
  t.same(await fetchSeen(app, url), first, 'the third answer, from the cache, is the first')
  const etag = String(first.headers.etag)
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const res = await fetchSeen(app, url, { 'if-none-match': ifNoneMatch })
    t.equal(res.status, 304, `If-None-Match: ${ifNoneMatch}`)
    t.equal(res.body, '')
    t.equal(res.headers.etag, etag)
    t.equal(res.headers['content-type'], undefined)
    t.equal(res.headers.vary, 'Accept')
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  }
  t.same(await fetchSeen(app, url, { 'if-none-match': '"other"' }), first, 'another tag: the cached page')
  const head = await fetchSeen(app, url, { 'if-none-match': '"other"' }, 'HEAD')
  t.same({ ...head, body: first.body }, first, 'HEAD: the cached page\'s headers')
  t.equal(head.body, '')
  t.equal((await fetchSeen(app, `${EXPLORE}?companies=7`)).status, 404, 'a page not in the cache cannot be made now')
})

t.test('a page cached from one snapshot is never served from the next', async t => {
  const app = await buildTestApp(t)
  const first = await fetchSeen(app, EXPLORE)
  t.equal(JSON.parse(first.body).count, 25)
  await fetchSeen(app, EXPLORE)
  stopMakingPages(app)
  t.same(await fetchSeen(app, EXPLORE), first, 'the page is in the cache of the first snapshot')

  const doc = smallSnapshot()
  doc.languages.en = doc.languages.en!.slice(0, 5)
  await writeFile(app.snapshots.file, JSON.stringify(doc))
  t.equal(await reloadFile(app), 'loaded')
  const after = await fetchSeen(app, EXPLORE)
  t.equal(after.status, 200)
  t.equal(JSON.parse(after.body).count, 5, 'the new snapshot\'s page, not the cached one')
  t.not(after.headers.etag, first.headers.etag, 'with the new snapshot\'s tag')
  const conditional = await fetchSeen(app, EXPLORE, { 'if-none-match': String(first.headers.etag) })
  t.equal(conditional.status, 200, 'the old tag is not current')
  t.equal(JSON.parse(conditional.body).count, 5)
  for (let i = 0; i < 2; i++) t.same(await fetchSeen(app, EXPLORE), after, 'kept and served from the new snapshot\'s cache')
})

t.test('with CORS limited to listed origins, a page cached for one Origin is not served for another', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { corsOrigin: ['https://a.test'] })
  const a = { origin: 'https://a.test' }
  const b = { origin: 'https://b.test' }
  const allowed = await fetchSeen(app, EXPLORE, a)
  t.equal(allowed.headers['access-control-allow-origin'], 'https://a.test')
  t.equal(allowed.headers.vary, 'Accept, Origin')
  await fetchSeen(app, EXPLORE, a)
  // a.test's page is kept now: a cache that ignored the Origin would answer the next two with it.
  const other = await fetchSeen(app, EXPLORE, b)
  t.equal(other.status, 200)
  t.equal(other.headers['access-control-allow-origin'], undefined, 'not the answer kept for another origin')
  t.equal(other.body, allowed.body)
  const none = await fetchSeen(app, EXPLORE)
  t.equal(none.headers['access-control-allow-origin'], undefined, 'nor for a request without Origin')
  await fetchSeen(app, EXPLORE, b)
  await fetchSeen(app, EXPLORE)
  stopMakingPages(app)
  t.same(await fetchSeen(app, EXPLORE, a), allowed, 'from the cache: a.test\'s own answer')
  t.same(await fetchSeen(app, EXPLORE, b), other, 'from the cache: b.test\'s own answer')
  t.same(await fetchSeen(app, EXPLORE), none, 'from the cache: the answer without Origin')
  t.equal((await fetchSeen(app, EXPLORE, { origin: 'https://c.test' })).status, 404, 'an origin not asked for before has nothing cached')
})

t.test('a bad Host is refused even for a URL whose page is cached', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { allowedHosts: ['ok.test'] })
  const ok = { host: 'ok.test' }
  const page = await fetchSeen(app, EXPLORE, ok)
  t.equal(page.status, 200)
  await fetchSeen(app, EXPLORE, ok)
  stopMakingPages(app)
  t.same(await fetchSeen(app, EXPLORE, ok), page, 'the page is cached for Host: ok.test')
  // Node keeps the first of two Host headers: a cache looked up before the host check would find the page.
  for (const extra of ['', `If-None-Match: ${String(page.headers.etag)}\r\n`]) {
    const answer = await rawRequest(app, `GET ${EXPLORE} HTTP/1.1\r\nHost: ok.test\r\nHost: ok.test\r\n${extra}Connection: close\r\n\r\n`)
    t.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/, `two Host headers${extra === '' ? '' : ' and the page\'s tag'}: a 400`)
    t.ok(answer.endsWith('\r\n\r\n{"detail":"Invalid Host header."}'), 'with Django\'s detail')
  }
  for (const method of ['GET', 'HEAD']) {
    const evil = await fetchSeen(app, EXPLORE, { host: 'evil.test' }, method)
    t.equal(evil.status, 400, `${method} with a Host not allowed`)
    t.equal(evil.body, method === 'GET' ? '{"detail":"Invalid Host header."}' : '')
  }
})

t.test('long runs of pages: the byte budget holds, the newest stay, the doorkeeper forgets the oldest', async t => {
  const cache = cacheFor(10 * 110, 10)
  for (let i = 0; i < 5000; i++) {
    offerTo(cache, `k${i}`, page(100 - String(i).length))
    offerTo(cache, `k${i}`, page(100 - String(i).length))
  }
  t.equal(cache.size, 10)
  for (let i = 4990; i < 5000; i++) t.ok(cache.get(`k${i}`), `k${i} kept`)
  t.equal(cache.get('k4989'), undefined)
  // 10,000 keys seen once: the first of them is forgotten, so its next make is a "first" again.
  for (let i = 0; i < 10_001; i++) offerTo(cache, `once${i}`, page(1))
  offerTo(cache, 'once0', page(1))
  t.equal(cache.get('once0'), undefined, 'forgotten, so seen once more only')
  offerTo(cache, 'once10000', page(1))
  t.ok(cache.get('once10000'), 'remembered, so kept the second time')
})

t.test('10,000 requests with a new junk Accept or a new junk query field leave the doorkeeper within its bytes', async t => {
  const app = await buildTestApp(t)
  // Kept whole, their keys would be 20 MB: more than 25 times the doorkeeper's bound.
  const junk = 'x'.repeat(2000)
  const accepts = await askMany(app, 10_000, n => ({ path: EXPLORE, headers: { accept: `application/json,${n}${junk}` } }))
  t.same(new Set(accepts), new Set([200]), 'each answered 200')
  const cache = pageCacheOf(app.snapshots.current()!, 0)
  t.ok(cache.doorkeeperBytes <= DOORKEEPER_MAX_BYTES, `the doorkeeper holds ${cache.doorkeeperBytes} bytes, at most ${DOORKEEPER_MAX_BYTES}`)
  // A page is let in early only where two of the keys share a hash (~5% of runs: one page).
  t.ok(cache.size <= 3, `no page asked for once is kept but for a shared hash: ${cache.size}`)
  const fields = await askMany(app, 10_000, n => ({ path: `${EXPLORE}?x${n}=${'j'.repeat(2000)}` }))
  t.same(new Set(fields), new Set([200]))
  t.ok(cache.doorkeeperBytes <= DOORKEEPER_MAX_BYTES, `and after the junk fields ${cache.doorkeeperBytes}`)
})

t.test('pages kept for junk keys stay within the cache\'s bytes, their keys and entries counted', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { pageCacheMb: 1 })
  const junk = 'x'.repeat(12_000)
  // Each asked twice: kept the second time.
  const statuses = await askMany(app, 400, n => ({ path: EXPLORE, headers: { accept: `application/json,${n >> 1}${junk}` } }))
  t.same(new Set(statuses), new Set([200]))
  const cache = pageCacheOf(app.snapshots.current()!, 0)
  t.ok(cache.size > 0, `${cache.size} pages kept`)
  t.ok(cache.bytes <= 1024 * 1024, `${cache.bytes} bytes, within PAGE_CACHE_MB=1`)
  const body = Buffer.byteLength((await app.inject(EXPLORE)).body)
  t.ok(cache.bytes >= cache.size * (body + 12_000 + PAGE_ENTRY_BYTES), 'each page counted with its body, key and entry')
})

t.test('a key longer than V8 hashes whole is never kept (all such keys would share one bucket)', async t => {
  const cache = cacheFor(100_000, 2)
  const long = 'k'.repeat(MAX_KEY_LENGTH + 1)
  offerTo(cache, long, page(10))
  offerTo(cache, long, page(10))
  t.equal(cache.get(long), undefined)
  t.equal(cache.doorkeeperBytes, 0, 'nor remembered')
  const longest = 'k'.repeat(MAX_KEY_LENGTH)
  offerTo(cache, longest, page(10))
  offerTo(cache, longest, page(10))
  t.ok(cache.get(longest), 'one of V8\'s hashed length is')
})

t.test('a kept page has a buffer of its own, never a slice of Node\'s pool that would hold the pool\'s other bytes', async t => {
  const cache = cacheFor(1000, 1)
  const pooled = { status: 200 as const, headers: [], body: Buffer.from('{"count":0}') }
  t.not(pooled.body.buffer.byteLength, pooled.body.length, 'what an indented page is made in: a slice of the pool')
  offerTo(cache, 'k', pooled)
  offerTo(cache, 'k', pooled)
  const kept = cache.get('k')!
  t.equal(kept.body.buffer.byteLength, kept.body.length)
  t.equal(kept.body.toString(), '{"count":0}')
})
