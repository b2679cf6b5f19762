import t from 'tap'
import { readCompanies, readLimit, readOffset, readPageParams } from '../../src/explore/explore-query.js'
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

t.test('limit: Python int() > 0, else 10; clamped to the maximum; the last value wins', async t => {
  const limit = (query: string, max = 100) => readLimit(parseQuery(query), max)
  t.equal(limit(''), 10)
  t.equal(limit('limit=5'), 5)
  t.equal(limit('limit=005'), 5)
  t.equal(limit('limit=0'), 10, 'strict: 0 is a ValueError')
  t.equal(limit('limit=00'), 10)
  t.equal(limit('limit=-0'), 10)
  t.equal(limit('limit=-5'), 10)
  t.equal(limit('limit=abc'), 10)
  t.equal(limit('limit='), 10)
  t.equal(limit('limit'), 10)
  t.equal(limit('limit=500'), 100)
  t.equal(limit('limit=500', 1000), 500)
  t.equal(limit('limit=99999999999999999999999999'), 100)
  t.equal(limit('limit=3&limit=7'), 7)
  t.equal(limit('limit=3&limit=x'), 10, 'the last value wins even when it is bad')
  t.equal(limit('limit=x&limit=%2B3'), 3)
})

t.test('limit: what Python int() reads', async t => {
  const limit = (query: string, max = 100) => readLimit(parseQuery(query), max)
  t.equal(limit('limit=%2B5'), 5, 'a sign')
  t.equal(limit('limit=+5'), 5, 'a literal + is a space')
  t.equal(limit('limit=%205%0A'), 5, 'ASCII spaces')
  t.equal(limit('limit=%C2%A05%E3%80%80'), 5, 'NBSP and U+3000')
  t.equal(limit('limit=%C2%855'), 5, 'NEL')
  t.equal(limit('limit=1_0'), 10, 'an underscore between digits')
  t.equal(limit('limit=%D9%A5'), 5, 'Arabic-Indic ٥')
  t.equal(limit('limit=%EF%BC%95'), 5, 'fullwidth ５')
  t.equal(limit('limit=%E0%A5%A8%E0%A5%A6'), 20, 'Devanagari २०')
  t.equal(limit('limit=-%D9%A5'), 10, 'negative in any script')
  t.equal(limit(`limit=${'9'.repeat(4300)}`), 100, '4300 digits: clamped')
  t.equal(limit(`limit=${'9'.repeat(4301)}`), 10, '4301 digits: a ValueError in Python')
  for (const bad of ['5.0', '1e1', '0x10', '--1', '%2B+1', '_1', '1_', '1__0', '%C2%B2', '%1C5', '5%00', '%FF']) {
    t.equal(limit(`limit=${bad}`), 10, bad)
  }
})

t.test('offset: Python int() >= 0, else 0; the last value wins; exact digits are kept', async t => {
  const offset = (query: string) => readOffset(parseQuery(query))
  t.same(offset(''), { offset: 0, digits: '0' })
  t.same(offset('offset=20'), { offset: 20, digits: '20' })
  t.same(offset('offset=0020'), { offset: 20, digits: '20' })
  t.same(offset('offset=000'), { offset: 0, digits: '0' })
  t.same(offset('offset=-0'), { offset: 0, digits: '0' })
  t.same(offset('offset=-1'), { offset: 0, digits: '0' })
  t.same(offset('offset=x'), { offset: 0, digits: '0' })
  t.same(offset('offset'), { offset: 0, digits: '0' })
  t.same(offset('offset=1&offset=2'), { offset: 2, digits: '2' })
  t.same(offset('offset=2&offset=x'), { offset: 0, digits: '0' }, 'the last value wins even when it is bad')
  t.same(offset('offset=123456789012345678901234567890'), { offset: Infinity, digits: '123456789012345678901234567890' })
})

t.test('offset: what Python int() reads, normalised', async t => {
  const offset = (query: string) => readOffset(parseQuery(query))
  t.same(offset('offset=%2B0_5'), { offset: 5, digits: '5' }, 'sign, leading zero, underscore')
  t.same(offset('offset=+15+'), { offset: 15, digits: '15' }, 'literal + are spaces')
  t.same(offset('offset=%0915%0D%0A'), { offset: 15, digits: '15' })
  t.same(offset('offset=%E2%80%8315%E2%80%A8'), { offset: 15, digits: '15' }, 'EM SPACE, LINE SEPARATOR')
  t.same(offset('offset=%D9%A1%D9%A5'), { offset: 15, digits: '15' }, 'Arabic-Indic ١٥')
  t.same(offset('offset=%EF%BC%91%EF%BC%95'), { offset: 15, digits: '15' }, 'fullwidth')
  t.same(offset('offset=%E0%A5%A7_%E0%A5%AB'), { offset: 15, digits: '15' }, 'Devanagari with an underscore')
  t.same(offset(`offset=%2B00${'٩'.repeat(30)}`), { offset: Infinity, digits: '9'.repeat(30) }, 'huge, exact')
  t.same(offset(`offset=${'1'.repeat(4300)}`), { offset: Infinity, digits: '1'.repeat(4300) })
  t.same(offset(`offset=${'1'.repeat(4301)}`), { offset: 0, digits: '0' }, '4301 digits: a ValueError in Python')
  for (const bad of ['-%D9%A5', '5.0', '1e1', '0x10', '--1', '%2B+1', '_1', '1_', '1__0', '%C2%B2', '%1F5', '%E2%80%8B5']) {
    t.same(offset(`offset=${bad}`), { offset: 0, digits: '0' }, bad)
  }
})

t.test('readPageParams: the links get the number read', async t => {
  const params = readPageParams(parseQuery('companies=7&limit=%2B1_0&offset=%20%D9%A1%D9%A5'), 100)
  t.same(params, { companies: [7], limit: 10, offset: 15, offsetDigits: '15' })
})
