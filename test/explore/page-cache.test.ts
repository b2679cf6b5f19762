import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { PageCache } from '../../src/explore/page-cache.js'
import { buildTestApp, EXPLORE, smallSnapshot } from '../helpers.js'

const page = (bytes: number) => ({ body: Buffer.alloc(bytes), headerList: ['content-length', String(bytes)], etag: '"x"' })

t.test('the cache keeps pages within its byte budget, oldest out first', async t => {
  const cache = new PageCache(100)
  // Each page is offered twice: the doorkeeper lets a page in the second time it is made.
  const offer = (key: string, bytes: number) => { cache.set(key, page(bytes)); cache.set(key, page(bytes)) }
  offer('a', 40)
  offer('b', 40)
  t.equal(cache.size, 2)
  offer('c', 40)
  t.equal(cache.get('a'), undefined, 'the oldest made room')
  t.ok(cache.get('b') && cache.get('c'))
  offer('huge', 200)
  t.equal(cache.get('huge'), undefined, 'a page larger than the budget is not kept')
  const first = cache.get('b')
  cache.set('b', page(10))
  t.equal(cache.get('b'), first, 'a key is filled once')
})

t.test('a page asked for once is not kept', async t => {
  const cache = new PageCache(1000)
  cache.set('once', page(10))
  t.equal(cache.get('once'), undefined)
  cache.set('once', page(10))
  t.ok(cache.get('once'), 'the second time it is')
})

t.test('wants: asked before a page is made, so one not kept can be sent in parts', async t => {
  const cache = new PageCache(1000)
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

t.test('conditional requests are answered from the cache too', async t => {
  const app = await buildTestApp(t)
  const first = await app.inject(`${EXPLORE}?companies=8`)
  await app.inject(`${EXPLORE}?companies=8`)
  await app.inject(`${EXPLORE}?companies=8`)
  const res = await app.inject({ url: `${EXPLORE}?companies=8`, headers: { 'if-none-match': String(first.headers.etag) } })
  t.equal(res.statusCode, 304)
  t.equal(res.body, '')
  t.equal(res.headers.etag, first.headers.etag)
  t.equal(res.headers['content-type'], undefined)
  t.equal(res.headers.vary, 'Accept')
})

t.test('a new snapshot starts with an empty cache', async t => {
  const app = await buildTestApp(t)
  const before = JSON.parse((await app.inject(EXPLORE)).body)
  t.equal(before.count, 25)
  const doc = smallSnapshot()
  doc.languages.en = doc.languages.en!.slice(0, 5)
  await writeFile(app.snapshots.file, JSON.stringify(doc))
  t.equal(await app.snapshots.reload(), 'loaded')
  t.equal(JSON.parse((await app.inject(EXPLORE)).body).count, 5)
})

t.test('with CORS limited to listed origins, answers are kept per Origin', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { corsOrigin: ['https://a.test'] })
  const allowed = await app.inject({ url: EXPLORE, headers: { origin: 'https://a.test' } })
  t.equal(allowed.headers['access-control-allow-origin'], 'https://a.test')
  const other = await app.inject({ url: EXPLORE, headers: { origin: 'https://b.test' } })
  t.equal(other.headers['access-control-allow-origin'], undefined, 'not the cached answer for another origin')
  t.equal((await app.inject({ url: EXPLORE, headers: { origin: 'https://a.test' } })).headers['access-control-allow-origin'], 'https://a.test')
})

t.test('a bad Host is refused even for a cached URL', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { allowedHosts: ['ok.test'] })
  t.equal((await app.inject({ url: EXPLORE, headers: { host: 'ok.test' } })).statusCode, 200)
  t.equal((await app.inject({ url: EXPLORE, headers: { host: 'evil.test' } })).statusCode, 400)
})

t.test('long runs of pages: the byte budget holds, the newest stay, the doorkeeper forgets the oldest', async t => {
  const cache = new PageCache(10 * 110)
  for (let i = 0; i < 5000; i++) {
    cache.set(`k${i}`, page(100 - String(i).length))
    cache.set(`k${i}`, page(100 - String(i).length))
  }
  t.equal(cache.size, 10)
  for (let i = 4990; i < 5000; i++) t.ok(cache.get(`k${i}`), `k${i} kept`)
  t.equal(cache.get('k4989'), undefined)
  // 10,000 keys seen once: the first of them is forgotten, so its next make is a "first" again.
  for (let i = 0; i < 10_001; i++) cache.set(`once${i}`, page(1))
  cache.set('once0', page(1))
  t.equal(cache.get('once0'), undefined, 'forgotten, so seen once more only')
  cache.set('once10000', page(1))
  t.ok(cache.get('once10000'), 'remembered, so kept the second time')
})
