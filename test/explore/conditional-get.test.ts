import t from 'tap'
import fc from 'fast-check'
import { writeFile } from 'node:fs/promises'
import { entityTag, notModified } from '../../src/explore/conditional-get.js'
import { buildTestApp, EXPLORE, smallSnapshot, reloadFile } from '../helpers.js'
import { runs } from '../property-runs.js'

t.test('entity tags: the snapshot version, then what the answer depends on', async t => {
  const tag = entityTag('v1', 'http://a.test', '/en/api/internal/explore/?companies=7', null)
  t.match(tag, /^"v1-[0-9a-z]+"$/)
  t.equal(entityTag('v1', 'http://a.test', '/en/api/internal/explore/?companies=7', null), tag, 'stable')
  for (const other of [
    entityTag('v2', 'http://a.test', '/en/api/internal/explore/?companies=7', null),
    entityTag('v1', 'https://a.test', '/en/api/internal/explore/?companies=7', null),
    entityTag('v1', 'http://a.test', '/en/api/internal/explore/?companies=8', null),
    entityTag('v1', 'http://a.test', '/en/api/internal/explore/?companies=7', 4)
  ]) t.not(other, tag)
})

t.test('If-None-Match: *, a list, weak comparison', async t => {
  const etag = '"v1-abc"'
  t.notOk(notModified(undefined, etag))
  t.ok(notModified('"v1-abc"', etag))
  t.ok(notModified('*', etag))
  t.ok(notModified('"x", W/"v1-abc" , "y"', etag))
  t.notOk(notModified('"v1-ab"', etag))
  t.notOk(notModified('v1-abc', etag), 'an unquoted tag is not the tag')
  t.notOk(notModified('', etag))
})

t.test('pages carry a strong ETag; If-None-Match answers 304 with no body', async t => {
  const app = await buildTestApp(t)
  const first = await app.inject(`${EXPLORE}?companies=7`)
  const etag = first.headers.etag as string
  t.match(etag, /^"[A-Za-z0-9_-]{27}-[0-9a-z]+"$/)
  t.equal((await app.inject(`${EXPLORE}?companies=7`)).headers.etag, etag, 'the same answer, the same tag')
  t.not((await app.inject(`${EXPLORE}?companies=8`)).headers.etag, etag, 'another answer, another tag')
  for (const method of ['GET', 'HEAD'] as const) {
    const res = await app.inject({ method, url: `${EXPLORE}?companies=7`, headers: { 'if-none-match': etag } })
    t.equal(res.statusCode, 304, method)
    t.equal(res.body, '')
    t.equal(res.headers.etag, etag)
    t.equal(res.headers.vary, 'Accept')
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
    t.equal(res.headers['content-type'], undefined)
  }
  t.equal((await app.inject({ url: `${EXPLORE}?companies=7`, headers: { 'if-none-match': '"stale"' } })).statusCode, 200)
  t.equal((await app.inject({ url: `${EXPLORE}?companies=abc`, headers: { 'if-none-match': '*' } })).statusCode, 400, 'errors are not conditional')
  t.equal((await app.inject({ url: '/xx/api/internal/explore/', headers: { 'if-none-match': '*' } })).statusCode, 404)
})

t.test('a new snapshot changes the tags', async t => {
  const app = await buildTestApp(t)
  const before = (await app.inject(EXPLORE)).headers.etag
  const doc = smallSnapshot()
  doc.generated_at = '2026-12-01T00:00:00Z'
  await writeFile(app.snapshots.file, JSON.stringify(doc))
  t.equal(await reloadFile(app), 'loaded')
  const after = await app.inject({ url: EXPLORE, headers: { 'if-none-match': String(before) } })
  t.equal(after.statusCode, 200, 'the old tag no longer matches')
  t.not(after.headers.etag, before)
})

t.test('the same file gives the same tags on every replica', async t => {
  const a = await buildTestApp(t)
  const b = await buildTestApp(t)
  t.equal((await a.inject(EXPLORE)).headers.etag, (await b.inject(EXPLORE)).headers.etag)
})

t.test('Cache-Control only when CACHE_MAX_AGE is set', async t => {
  const plain = await buildTestApp(t)
  t.equal((await plain.inject(EXPLORE)).headers['cache-control'], undefined, 'none by default, like the original')
  const cached = await buildTestApp(t, smallSnapshot(), { cacheMaxAge: 300 })
  const res = await cached.inject(EXPLORE)
  t.equal(res.headers['cache-control'], 'public, max-age=300')
  t.equal((await cached.inject({ url: EXPLORE, headers: { 'if-none-match': String(res.headers.etag) } })).headers['cache-control'], 'public, max-age=300', 'on 304 too')
  t.equal((await cached.inject(`${EXPLORE}?companies=x`)).headers['cache-control'], undefined, 'not on errors')
})

/** The first port, kept as the oracle of the walk in place. */
function firstPort (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim()
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true
  }
  return false
}

t.test('every If-None-Match gets the first port\'s answer', async t => {
  const etag = '"v1-abc"'
  const piece = fc.constantFrom(',', ' ', '\t', '\u00a0', '\ufeff', '*', '"', 'W/', 'w/', 'W', 'W:', etag, '"v1-ab"', 'v1-abc', 'x', '**')
  fc.assert(fc.property(fc.array(piece, { maxLength: 12 }).map(pieces => pieces.join('')), header =>
    notModified(header, etag) === firstPort(header, etag)
  ), { numRuns: runs(20_000) })
  t.notOk(notModified(','.repeat(15_000), etag), '15 KB of commas: no tag')
  t.ok(notModified(`${' ,'.repeat(7000)} W/${etag} `, etag), 'the tag at the end of 15 KB')
})
