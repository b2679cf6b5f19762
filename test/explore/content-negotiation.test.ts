import t from 'tap'
import fc from 'fast-check'
import { negotiate } from '../../src/explore/content-negotiation.js'
import { isTrimmed } from '../../src/explore/header-text.js'
import { pythonInt } from '../../src/explore/python-int.js'
import { buildTestApp, EXPLORE, smallSnapshot } from '../helpers.js'
import { runs } from '../property-runs.js'

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

/**
 * The first port of Django's `parse_header` and DRF's choice, kept as the oracle: every answer of the one-walk
 * negotiation must be this one's (it re-read the whole prefix at each `;` after an unmatched quote: quadratic).
 */
function firstPort (accept: string | undefined, format: string | undefined): { indent: number | null } | 'not found' | 'not acceptable' {
  if (format !== undefined && format !== '' && format !== 'json') return 'not found'
  if (accept === undefined || accept === '*/*' || accept === 'application/json') return { indent: null }
  const parse = (text: string): { main: string, sub: string, params: Map<string, string>, precedence: number } => {
    const parts: string[] = []
    let rest = text
    for (;;) {
      let end = rest.indexOf(';')
      while (end > 0 && (rest.slice(0, end).split('"').length - 1) % 2 === 1) end = rest.indexOf(';', end + 1)
      if (end < 0) { parts.push(rest.trim()); break }
      parts.push(rest.slice(0, end).trim())
      rest = rest.slice(end + 1)
    }
    const full = (parts.shift() as string).toLowerCase()
    const params = new Map<string, string>()
    for (const part of parts) {
      const eq = part.indexOf('=')
      if (eq < 0) continue
      let value = part.slice(eq + 1).trim()
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replace(/\\\\/g, '\\').replace(/\\"/g, '"')
      params.set(part.slice(0, eq).trim().toLowerCase(), value)
    }
    const slash = full.indexOf('/')
    const main = slash < 0 ? full : full.slice(0, slash)
    const sub = slash < 0 ? '' : full.slice(slash + 1)
    const onlyQ = params.size === 0 || (params.size === 1 && params.has('q'))
    return { main, sub, params, precedence: main === '*' ? 0 : sub === '*' ? 1 : onlyQ ? 2 : 3 }
  }
  let best: ReturnType<typeof parse> | null = null
  for (const token of accept.split(',')) {
    const type = parse(token.trim())
    const matches = (type.main === '*' || type.main === 'application') && (type.sub === '*' || type.sub === 'json')
    if (matches && (best === null || type.precedence > best.precedence)) best = type
  }
  if (best === null) return 'not acceptable'
  const indentText = best.params.get('indent')
  if (indentText === undefined) return { indent: null }
  const indent = pythonInt(indentText)
  if (indent === null) return { indent: null }
  const clamped = Math.max(Math.min(indent.value, 8), 0)
  return clamped === 0 ? { indent: null } : { indent: clamped }
}

function answerOf (accept: string | undefined, format?: string): ReturnType<typeof firstPort> {
  try {
    return negotiate(accept, format)
  } catch (error) {
    const { statusCode } = error as { statusCode?: number }
    if (statusCode === 404) return 'not found'
    if (statusCode === 406) return 'not acceptable'
    throw error
  }
}

// Every character the parse treats apart, the words it compares, and whitespace that trim() takes and Python keeps.
const acceptPiece = fc.constantFrom('"', ';', ',', '=', '\\', '\\"', '\\\\', ' ', '\t', '\u00a0', '\ufeff', '/', '*', '*/*',
  'application', 'APPLICATION', 'json', 'JSON', 'application/json', 'text/html', 'q', 'Q', 'q=0.5', 'indent', 'INDENT',
  'indent=', '4', ' 2 ', '1_0', '-3', '20', '0', 'x', '\u0660', '\u212a', '\u0130')
const space = fc.constantFrom('', '', ' ', '\t', '\u00a0', '\ufeff', '\u2028')
const spaced = (words: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.tuple(space, words, space).map(parts => parts.join(''))
// Media types as clients write them and as they could: parameters with quoted values holding `;`, `,` and escapes.
const value = fc.oneof(
  fc.constantFrom('2', '4', '0', '9', ' 3', '1_0', 'x', '"', '""'),
  fc.array(fc.constantFrom('2', ';', ',', '\\"', '\\\\', 'indent=3', 'q', ' '), { maxLength: 4 }).map(parts => `"${parts.join('')}"`)
)
const parameter = fc.tuple(spaced(fc.constantFrom('indent', 'Indent', 'q', 'x', '', 'indent*')), fc.constantFrom('=', '', '=='), spaced(value))
  .map(parts => parts.join(''))
const mediaType = fc.tuple(spaced(fc.constantFrom('application/json', 'Application/JSON', '*/*', 'application/*', '*/json', 'text/html', 'application', '"a;b"', '')),
  fc.array(parameter, { maxLength: 4 })).map(([type, parameters]) => [type, ...parameters].join(';'))
const accept = fc.oneof(
  fc.array(mediaType, { minLength: 1, maxLength: 4 }).map(types => types.join(',')),
  fc.array(acceptPiece, { maxLength: 24 }).map(pieces => pieces.join(''))
)

t.test('every Accept header gets the first port\'s answer: 406, compact or the same indent', async t => {
  fc.assert(fc.property(accept, fc.constantFrom(undefined, '', 'json', 'api'), (accept, format) =>
    JSON.stringify(answerOf(accept, format)) === JSON.stringify(firstPort(accept, format))
  ), { numRuns: runs(20_000) })
  t.pass('20,000 headers')
})

t.test('trimmed as the first port trimmed: every character String.prototype.trim takes, and none other', async t => {
  for (let code = 0; code <= 0xffff; code++) {
    const char = String.fromCharCode(code)
    if (isTrimmed(code) !== (char.trim() === '')) t.fail(`U+${code.toString(16)}`)
  }
  t.pass('the BMP')
})

t.test('a 15 KB header of quotes and semicolons answers the first port\'s 406, in one walk', async t => {
  const quotes = `"${';""'.repeat(5000)}`
  t.equal(answerOf(quotes), 'not acceptable')
  t.equal(answerOf(quotes.slice(0, 3001)), firstPort(quotes.slice(0, 3001), undefined))
  const json = `application/json;x="${';'.repeat(15_000)}`
  t.same(answerOf(json), { indent: null })
  t.same(answerOf(`${json}",indent=3`), firstPort(`${json}",indent=3`, undefined))
  t.same(answerOf(`application/json;indent="${'\\\\'.repeat(5000)}3"`), { indent: null })
  t.same(answerOf(`${','.repeat(15_000)}application/json;indent=2`), { indent: 2 })
})

t.test('over HTTP, the 15 KB quote header gets the same 406 as a short one, on the fast path and through Fastify', async t => {
  const quotes = `"${';""'.repeat(5000)}`
  for (const fastPath of [true, false]) {
    const app = await buildTestApp(t, smallSnapshot(), { fastPath })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST']) {
      const [long, short] = await Promise.all([quotes, '"'].map(async accept => {
        const res = await fetch(`http://127.0.0.1:${port}${EXPLORE}`, { method, headers: { accept } })
        const { date, ...headers } = Object.fromEntries(res.headers)
        return { status: res.status, headers, body: await res.text() }
      }))
      t.equal(long?.status, 406, `${method}, FAST_PATH=${String(fastPath)}`)
      t.same(long, short, 'the same answer as for a short header')
    }
  }
})
