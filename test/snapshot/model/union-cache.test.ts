// The thread's cache of unions: bounded in bytes, least recently used out first, and no new union for unknown ids.
import t from 'tap'
import { Overlay } from '../../../src/snapshot/model/overlay.js'
import { UnionCache, unionCache } from '../../../src/snapshot/model/union-cache.js'
import { askMany, buildTestApp, EXPLORE } from '../../helpers.js'

const union = (ranks: number): Overlay => Overlay.over(new Uint32Array(ranks))

t.test('unions are kept within the cache\'s bytes, the least recently used out first', async t => {
  const cache = new UnionCache(3 * (4000 + 600))
  cache.keep('a', union(1000))
  cache.keep('b', union(1000))
  cache.keep('c', union(1000))
  t.equal(cache.size, 3)
  t.ok(cache.get('a'), 'a used again')
  cache.keep('d', union(1000))
  t.equal(cache.get('b'), undefined, 'b, the least recently used, made room')
  t.ok(cache.get('a') && cache.get('c') && cache.get('d'))
  t.ok(cache.bytes <= 3 * 4600, `${cache.bytes} bytes`)
  cache.keep('huge', union(4000))
  t.equal(cache.get('huge'), undefined, 'a union larger than the cache is not kept')
  cache.keep('k'.repeat(16_384), union(1))
  t.equal(cache.get('k'.repeat(16_384)), undefined, 'nor one whose key V8 would hash by its length alone')
  for (let i = 0; i < 1000; i++) cache.keep(`many${i}`, union(i % 50))
  t.ok(cache.bytes <= 3 * 4600, `after 1,000 more: ${cache.bytes} bytes`)
})

t.test('requests naming unknown companies make no new union, and get the union of the known ones', async t => {
  const app = await buildTestApp(t)
  const [known] = await askMany(app, 1, () => ({ path: `${EXPLORE}?companies=7&companies=9&limit=100` }))
  t.equal(known, 200)
  const before = unionCache.size
  const expected = (await app.inject(`${EXPLORE}?companies=9&companies=7&limit=100`)).body
  const statuses = await askMany(app, 300, n => ({ path: `${EXPLORE}?companies=7&companies=${1000 + n}&companies=9&companies=${5000 + n}&limit=100` }))
  t.same(new Set(statuses), new Set([200]))
  t.equal(unionCache.size, before, 'the one union of 7 and 9, already kept')
  const res = await app.inject(`${EXPLORE}?companies=7&companies=123456&companies=9&limit=100`)
  t.equal(res.body, expected, 'the page of 7 and 9 (12 items: no links)')
  t.equal(JSON.parse(res.body).count, 12)
  const alone = await askMany(app, 100, n => ({ path: `${EXPLORE}?companies=8&companies=${1000 + n}` }))
  t.same(new Set(alone), new Set([200]))
  t.equal(unionCache.size, before, 'one known company and unknown ones: its own list, no union')
})

t.test('the thread\'s app sizes its union cache with its page cache: PAGE_CACHE_MB=0 keeps no union either', async t => {
  const uncached = await buildTestApp(t, undefined, { pageCacheMb: 0 })
  const before = unionCache.size
  t.same(await askMany(uncached, 3, () => ({ path: `${EXPLORE}?companies=8&companies=9` })), [200, 200, 200])
  t.equal(unionCache.size, before, 'none kept')
  const cached = await buildTestApp(t, undefined, { pageCacheMb: 1 })
  t.same(await askMany(cached, 1, () => ({ path: `${EXPLORE}?companies=8&companies=9` })), [200])
  t.equal(unionCache.size, before + 1, 'kept, within a quarter of 1 MiB')
  t.ok(unionCache.bytes <= 256 * 1024)
})
