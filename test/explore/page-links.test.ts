import t from 'tap'
import { pageLinks } from '../../src/explore/page-links.js'
import { parseQuery } from '../../src/explore/query-string.js'
import { runs } from '../property-runs.js'

const URL = 'http://testserver/en/api/internal/explore/'
const links = (query: string, count: number, limit: number, offset: number, offsetDigits = String(offset)) => {
  const position = { count, limit, offset, offsetDigits }
  return pageLinks(URL, parseQuery(query), position)
}

t.test('the HTTP API reference\'s example: other parameters kept, query sorted, offset dropped at 0', async t => {
  t.same(links('zeta=1&companies=7&offset=10', 100, 10, 10), {
    next: `${URL}?companies=7&limit=10&offset=20&zeta=1`,
    previous: `${URL}?companies=7&limit=10&zeta=1`
  })
})

t.test('first page: next with limit even when the request had none; previous null', async t => {
  t.same(links('companies=7', 25, 10, 0), { next: `${URL}?companies=7&limit=10&offset=10`, previous: null })
})

t.test('last page: next null when offset + limit reaches count', async t => {
  t.same(links('offset=20', 25, 10, 20), { next: null, previous: `${URL}?limit=10&offset=10` })
  t.equal(links('offset=15', 25, 10, 15).next, null, 'exactly reaching the count')
  t.equal(links('offset=14', 25, 10, 14).next, `${URL}?limit=10&offset=24`)
})

t.test('previous keeps an offset that is not a multiple of the limit', async t => {
  t.equal(links('offset=15', 100, 10, 15).previous, `${URL}?limit=10&offset=5`)
  t.equal(links('offset=5', 100, 10, 5).previous, `${URL}?limit=10`)
})

t.test('beyond the end: no results, no next, previous one page back', async t => {
  t.same(links('offset=500', 25, 10, 500), { next: null, previous: `${URL}?limit=10&offset=490` })
})

t.test('an empty result still links back when the offset is past 0', async t => {
  t.same(links('companies=99&offset=20', 0, 10, 20), { next: null, previous: `${URL}?companies=99&limit=10&offset=10` })
})

t.test('offsets past 2^53 come back exact', async t => {
  const digits = '123456789012345678901234567890'
  t.equal(links(`offset=${digits}`, 25, 10, Infinity, digits).previous, `${URL}?limit=10&offset=123456789012345678901234567880`)
})

t.test('the effective limit and blank, repeated, unicode parameters are written as DRF writes them', async t => {
  t.equal(links('limit=500&b=&a=1&a=2&q=caf%C3%A9+au+lait&x=%2B', 1000, 100, 0).next,
    `${URL}?a=1&a=2&b=&limit=100&offset=100&q=caf%C3%A9+au+lait&x=%2B`)
  t.equal(links('limit=x&limit=3', 30, 10, 0).next, `${URL}?limit=10&offset=10`, 'repeated limit collapses to the effective one')
})

t.test('property: the same links as re-encoding the whole query with limit and offset replaced', async t => {
  const { default: fc } = await import('fast-check')
  const { compareCodePoints, quotePlus } = await import('../../src/explore/query-string.js')
  // Python's urlencode(sorted(dict.items()), doseq=True): keys in code point order, repeated values in order.
  const encodeQuery = (dict: Record<string, string[]>): string => Object.keys(dict).sort(compareCodePoints)
    .flatMap(key => (dict[key] as string[]).map(value => `${quotePlus(key)}=${quotePlus(value)}`)).join('&')
  // DRF's replace_query_param, written the plain way: copy, replace, sort and encode everything.
  const plain = (query: Record<string, string[]>, limit: number, offset: number | null) => {
    const dict: Record<string, string[]> = Object.assign(Object.create(null), query, { limit: [String(limit)] })
    if (offset === null) delete dict.offset
    else dict.offset = [String(offset)]
    return `${URL}?${encodeQuery(dict)}`
  }
  const key = fc.oneof(fc.constantFrom('limit', 'offset', 'companies', 'l', 'limit2', 'm', 'o', 'offsetx', 'p', 'z', 'A', '\u00e9', '\u{1F600}', '\uE000', ''), fc.string({ maxLength: 6 }))
  fc.assert(fc.property(
    fc.array(fc.tuple(key, fc.string({ maxLength: 6 })), { maxLength: 8 }),
    fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 60 }),
    (fields, count, limit, offset) => {
      const query: Record<string, string[]> = Object.create(null)
      for (const [k, v] of fields) (query[k] ??= []).push(v)
      const got = pageLinks(URL, query, { count, limit, offset, offsetDigits: String(offset) })
      const next = offset + limit < count ? plain(query, limit, offset + limit) : null
      const previous = offset <= 0 ? null : plain(query, limit, offset - limit <= 0 ? null : offset - limit)
      return got.next === next && got.previous === previous
    }
  ), { numRuns: runs(2000) })
  t.pass('2,000 random queries')
})
