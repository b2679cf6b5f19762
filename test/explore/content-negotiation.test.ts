import t from 'tap'
import { negotiate } from '../../src/explore/content-negotiation.js'

t.test('JSON is chosen for any Accept that admits application/json', async t => {
  for (const accept of [undefined, '*/*', 'application/json', 'application/*', 'APPLICATION/JSON',
    'text/html, */*;q=0.8', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'application/json;q=0',
    'application/json; charset=utf-8']) {
    t.same(negotiate(accept, undefined), { indent: null }, String(accept))
  }
})

t.test('an Accept header that admits no JSON is a 406, the empty header included', async t => {
  for (const accept of ['text/html', '', 'application/xml', 'application', '*', 'text/*', 'application/jsonx']) {
    t.throws(() => negotiate(accept, undefined), { code: 'EXPLORE_ERR_NOT_ACCEPTABLE', statusCode: 406, body: { detail: 'Could not satisfy the request Accept header.' } }, JSON.stringify(accept))
  }
})

t.test('?format= other than json is a 404; blank is ignored', async t => {
  t.same(negotiate(undefined, 'json'), { indent: null })
  t.same(negotiate(undefined, ''), { indent: null })
  for (const format of ['api', 'JSON', 'xml']) t.throws(() => negotiate(undefined, format), { code: 'EXPLORE_ERR_NOT_FOUND', statusCode: 404 }, format)
  t.throws(() => negotiate('text/html', 'api'), { code: 'EXPLORE_ERR_NOT_FOUND', statusCode: 404 }, 'format is checked before Accept')
})

t.test('indent=N asks for indented output, clamped to 1..8', async t => {
  t.same(negotiate('application/json; indent=4', undefined), { indent: 4 })
  t.same(negotiate('application/json;indent="2"', undefined), { indent: 2 })
  t.same(negotiate('application/json; indent=20', undefined), { indent: 8 })
  t.same(negotiate('application/json; indent=0', undefined), { indent: null })
  t.same(negotiate('application/json; indent=-3', undefined), { indent: null })
  t.same(negotiate('application/json; indent=x', undefined), { indent: null })
  t.same(negotiate('application/json; indent= 1_0 ', undefined), { indent: 8 }, 'Python int() rules')
  t.same(negotiate('text/html, application/json; indent=2', undefined), { indent: 2 })
  t.same(negotiate('*/*, application/json; indent=3', undefined), { indent: 3 }, 'the most specific match wins')
})
