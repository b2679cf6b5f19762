import t from 'tap'
import { readCompanies, readLimit, readOffset } from '../../src/explore/explore-query.js'
import { parseQuery } from '../../src/explore/query-string.js'

t.test('companies: digits only, repeatable, blanks ignored', async t => {
  t.equal(readCompanies(parseQuery('')), null, 'absent: no filter')
  t.equal(readCompanies(parseQuery('companies=')), null, 'blank: no filter')
  t.equal(readCompanies(parseQuery('companies=&companies=')), null)
  t.same(readCompanies(parseQuery('companies=7')), [7])
  t.same(readCompanies(parseQuery('companies=007&companies=&companies=3')), [7, 3])
  t.same(readCompanies(parseQuery('companies=99999999999999999999999')), [Infinity], 'valid, linked to nothing')
  for (const bad of ['abc', '+7', '%207', '7.0', '-1', '7a', '１', '٣', '7,8', ' ']) {
    t.throws(() => readCompanies(parseQuery(`companies=${encodeURIComponent(bad)}`)),
      { code: 'EXPLORE_ERR_COMPANIES', statusCode: 400, body: { companies: ['Enter a whole number.'] } }, `companies=${bad}`)
  }
  t.throws(() => readCompanies(parseQuery('companies=7&companies=x')), { code: 'EXPLORE_ERR_COMPANIES', statusCode: 400 }, 'one bad value is enough')
})

t.test('limit: digits and > 0, else 10; clamped to the maximum; the last value wins', async t => {
  const limit = (query: string, max = 100) => readLimit(parseQuery(query), max)
  t.equal(limit(''), 10)
  t.equal(limit('limit=5'), 5)
  t.equal(limit('limit=005'), 5)
  t.equal(limit('limit=0'), 10)
  t.equal(limit('limit=00'), 10)
  t.equal(limit('limit=-5'), 10)
  t.equal(limit('limit=abc'), 10)
  t.equal(limit('limit='), 10)
  t.equal(limit('limit=+5'), 10)
  t.equal(limit('limit=5.0'), 10)
  t.equal(limit('limit=500'), 100)
  t.equal(limit('limit=500', 1000), 500)
  t.equal(limit('limit=99999999999999999999999999'), 100)
  t.equal(limit('limit=3&limit=7'), 7)
  t.equal(limit('limit=3&limit=x'), 10, 'the last value wins even when it is bad')
})

t.test('offset: digits, else 0; the last value wins; exact digits are kept', async t => {
  const offset = (query: string) => readOffset(parseQuery(query))
  t.same(offset(''), { offset: 0, digits: '0' })
  t.same(offset('offset=20'), { offset: 20, digits: '20' })
  t.same(offset('offset=0020'), { offset: 20, digits: '20' })
  t.same(offset('offset=000'), { offset: 0, digits: '0' })
  t.same(offset('offset=-1'), { offset: 0, digits: '0' })
  t.same(offset('offset=x'), { offset: 0, digits: '0' })
  t.same(offset('offset=1&offset=2'), { offset: 2, digits: '2' })
  t.same(offset('offset=123456789012345678901234567890'), { offset: Infinity, digits: '123456789012345678901234567890' })
})
