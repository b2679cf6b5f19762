// The explore query read as Django and DRF read it: the query string, Python's int(), and the explore parameters.
import t from 'tap'
import fc from 'fast-check'
import { readCompanies, readLimit, readOffset, readPageParams } from '../../src/explore/explore-query.js'
import { MAX_STR_DIGITS, pythonInt } from '../../src/explore/python-int.js'
import {
  compareCodePoints, fieldCount, parseQuery, quotePlus, unquotePlus
} from '../../src/explore/query-string.js'
import { runs } from '../property-runs.js'

// src/explore/query-string.ts: query strings read and written as Django does; the expected values are what CPython 3.11 answers.
t.test('unquotePlus decodes like Python unquote(s.replace("+", " "))', async t => {
  const cases: Array<[string, string]> = [
    ['plain', 'plain'],
    ['a+b', 'a b'],
    ['a%2Bb', 'a+b'],
    ['%C3%A9t%C3%A9', 'été'],
    ['%c3%a9', 'é'], // lower-case hex
    ['%E9', '\ufffd'], // a Latin-1 byte is not UTF-8
    ['%C3', '\ufffd'],
    ['%F0%9F%98%80', '😀'],
    ['%F0%9F%98', '\ufffd'],
    ['%ED%A0%80', '\ufffd\ufffd\ufffd'], // an encoded surrogate
    ['%zz', '%zz'],
    ['%', '%'],
    ['%4', '%4'],
    ['100%', '100%'],
    ['é%C3%A9+x', 'éé x'], // raw non-ASCII passes through between decoded runs
    ['%C3+%A9', '\ufffd \ufffd'], // a literal character splits a sequence
    ['%EF%BB%BF5', '\ufeff5'] // a byte order mark is a character to Python, kept (limit=%EF%BB%BF5 is no number)
  ]
  for (const [input, expected] of cases) t.equal(unquotePlus(input), expected, input)
})

t.test('parseQuery keeps blank values, repeated keys in order, and skips empty fields', async t => {
  t.same(parseQuery(''), {})
  t.same(parseQuery('a=1&a=2&b&c=&&d=x=y'), { a: ['1', '2'], b: [''], c: [''], d: ['x=y'] })
  t.same(parseQuery('compan%69es=7&%20=+'), { companies: ['7'], ' ': [' '] })
  t.same(parseQuery('a=1;b=2'), { a: ['1;b=2'] }, 'only & separates fields')
  t.equal(Object.getPrototypeOf(parseQuery('a=1')), null, 'no prototype: __proto__ is an ordinary key')
  t.same(Object.entries(parseQuery('__proto__=1')), [['__proto__', ['1']]])
})

t.test('fieldCount counts like Django, empty fields included', async t => {
  t.equal(fieldCount(''), 0)
  t.equal(fieldCount('a=1'), 1)
  t.equal(fieldCount('a=1&&b'), 3)
  t.equal(fieldCount('&'.repeat(1000)), 1001)
})

t.test('quotePlus encodes like Python quote_plus', async t => {
  t.equal(quotePlus('AZaz09_.-~'), 'AZaz09_.-~')
  t.equal(quotePlus('a b+c/é~!*()\''), 'a+b%2Bc%2F%C3%A9~%21%2A%28%29%27')
  t.equal(quotePlus('\n\u0000😀'), '%0A%00%F0%9F%98%80')
  t.equal(quotePlus(''), '')
})

t.test('compareCodePoints orders by code point, as Python sorts strings', async t => {
  t.ok(compareCodePoints('B', '_') < 0)
  t.ok(compareCodePoints('_', 'a') < 0)
  t.ok(compareCodePoints('a', 'ab') < 0)
  t.equal(compareCodePoints('x', 'x'), 0)
  // U+FFFF sorts before U+1F600 by code point, after it by UTF-16 unit.
  t.ok(compareCodePoints('\uffff', '😀') < 0)
  t.ok(compareCodePoints('😀', '\uffff') > 0)
  t.ok(compareCodePoints('\ud7ff', '😀') < 0)
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
    const expected = [...a].map(c => c.codePointAt(0) as number)
    const other = [...b].map(c => c.codePointAt(0) as number)
    let sign = 0
    for (let i = 0; i < Math.min(expected.length, other.length) && sign === 0; i++) sign = Math.sign((expected[i] as number) - (other[i] as number))
    if (sign === 0) sign = Math.sign(expected.length - other.length)
    return Math.sign(compareCodePoints(a, b)) === sign
  }))
})

t.test('parse, then quote every key and value, then parse again is stable for any query', async t => {
  fc.assert(fc.property(fc.string(), query => {
    const once = parseQuery(query)
    const encoded = Object.entries(once).flatMap(([key, values]) => values.map(value => `${quotePlus(key)}=${quotePlus(value)}`))
    const again = parseQuery(encoded.join('&'))
    return JSON.stringify(Object.entries(again).sort()) === JSON.stringify(Object.entries(once).sort())
  }), { numRuns: runs(500) })
})

/** The first ports, kept as the oracles of the ones that write bytes once. */
const firstPorts = {
  unquotePlus (text: string): string {
    const utf8 = new TextDecoder('utf-8', { ignoreBOM: true })
    const hex = (code: number): number => {
      if (code >= 0x30 && code <= 0x39) return code - 0x30
      const lower = code | 0x20
      return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1
    }
    if (!text.includes('%')) return text.replace(/\+/g, ' ')
    let out = ''
    let bytes: number[] = []
    const flush = (): void => {
      if (bytes.length > 0) out += utf8.decode(Uint8Array.from(bytes))
      bytes = []
    }
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code === 0x25 && i + 2 < text.length && hex(text.charCodeAt(i + 1)) >= 0 && hex(text.charCodeAt(i + 2)) >= 0) {
        bytes.push(hex(text.charCodeAt(i + 1)) * 16 + hex(text.charCodeAt(i + 2)))
        i += 2
      } else if (code < 0x80) {
        bytes.push(code === 0x2b ? 0x20 : code)
      } else {
        flush()
        out += text[i]
      }
    }
    flush()
    return out
  },
  quotePlus (text: string): string {
    let out = ''
    for (const byte of Buffer.from(text, 'utf8')) {
      if ((byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a) || [0x5f, 0x2e, 0x2d, 0x7e].includes(byte)) out += String.fromCharCode(byte)
      else if (byte === 0x20) out += '+'
      else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
    }
    return out
  }
}

// Escapes whole, cut and broken; raw characters of every UTF-8 length; lone surrogates; a byte order mark.
const queryPiece = fc.constantFrom('%', '%4', '%41', '%zz', '%C3', '%A9', '%c3%a9', '%E2%82', '%F0%9F', '%F0%9F%98%80',
  '%ED%A0%80', '%EF%BB%BF', '%80', '%FF', '+', ' ', 'a', '&', '=', '~', '\u00e9', '\u0080', '\u07ff', '\u0800', '\u20ac',
  '\uffff', '\ufeff', '😀', '\ud800', '\udc00', '\u0000')

t.test('every text gets the first ports\' answers: unquotePlus and quotePlus', async t => {
  fc.assert(fc.property(fc.array(queryPiece, { maxLength: 16 }).map(pieces => pieces.join('')), text =>
    unquotePlus(text) === firstPorts.unquotePlus(text) && quotePlus(text) === firstPorts.quotePlus(text)
  ), { numRuns: runs(20_000) })
  const long = '\u00e9%E9'.repeat(2000)
  t.equal(unquotePlus(long), firstPorts.unquotePlus(long), '8 KB of escapes between raw characters')
  t.equal(quotePlus(long), firstPorts.quotePlus(long))
})

// src/explore/python-int.ts: Python's int() on strings; the expected values were checked against CPython 3.11 (/usr/bin/python3).
const read = (text: string) => pythonInt(text)
/** A test name with every character outside printable ASCII escaped (a raw U+2028 would break TAP). */
const show = (text: string) => [...text].map(c => /[ -~]/.test(c) ? c : `\\u{${(c.codePointAt(0) as number).toString(16)}}`).join('')

t.test('ASCII digits: leading zeros dropped, exact past 2^53', async t => {
  t.same(read('0'), { value: 0, digits: '0' })
  t.same(read('000'), { value: 0, digits: '0' })
  t.same(read('7'), { value: 7, digits: '7' })
  t.same(read('0015'), { value: 15, digits: '15' })
  t.same(read('9007199254740991'), { value: 9007199254740991, digits: '9007199254740991' }, '2^53 - 1 is exact')
  t.same(read('9007199254740992'), { value: Infinity, digits: '9007199254740992' }, '2^53 is not')
  t.same(read('000123456789012345678901234567890'), { value: Infinity, digits: '123456789012345678901234567890' })
})

t.test('signs: one + or -, right before the digits', async t => {
  t.same(read('+5'), { value: 5, digits: '5' })
  t.same(read('-5'), { value: -5, digits: '-5' })
  t.same(read('-0'), { value: 0, digits: '0' }, 'minus zero is zero')
  t.ok(Object.is(read('-00')?.value, 0), 'not -0')
  t.same(read('-' + '9'.repeat(30)), { value: -Infinity, digits: '-' + '9'.repeat(30) })
  t.same(read(' +0_5 '), { value: 5, digits: '5' })
  for (const bad of ['+', '-', '--1', '++1', '+-1', '-+1', '+ 1', '- 1', '1+', '1-', '1-1']) t.equal(read(bad), null, show(bad))
})

t.test('underscores: one at a time, between two digits', async t => {
  t.same(read('1_0'), { value: 10, digits: '10' })
  t.same(read('1_000_000'), { value: 1000000, digits: '1000000' })
  t.same(read('0_0'), { value: 0, digits: '0' })
  t.same(read('-1_5'), { value: -15, digits: '-15' })
  t.same(read('٥_٥'), { value: 55, digits: '55' }, 'between any decimal digits')
  for (const bad of ['_', '_1', '1_', '1__0', '+_1', '1_ ', ' _1', '1_٥_']) t.equal(read(bad), null, show(bad))
})

t.test('whitespace around the number: ASCII and Unicode spaces, not \\x1c-\\x1f', async t => {
  const spaces = ['\t', '\n', '\v', '\f', '\r', ' ', '\x85', '\xa0', '\u1680', '\u2000', '\u2003', '\u200a',
    '\u2028', '\u2029', '\u202f', '\u205f', '\u3000']
  for (const s of spaces) {
    t.same(read(`${s}42${s}`), { value: 42, digits: '42' }, show(s))
    t.equal(read(`4${s}2`), null, `${show(s)} inside`)
    t.equal(read(s), null, `${show(s)} alone`)
  }
  t.same(read(' \t\u3000-7\xa0\n '), { value: -7, digits: '-7' }, 'runs of mixed spaces')
  // str.isspace() says yes, but int() passes ASCII to C's Py_ISSPACE, which says no.
  for (const s of ['\x1c', '\x1d', '\x1e', '\x1f']) t.equal(read(`${s}5`), null, show(s))
  // Not Python whitespace, although JavaScript's \s and trim() take U+FEFF.
  for (const s of ['\ufeff', '\u200b']) t.equal(read(`5${s}`), null, show(s))
  t.equal(read(''), null, 'empty')
  t.equal(read('   '), null, 'only spaces')
})

t.test('Unicode decimal digits (category Nd), mixed freely', async t => {
  t.same(read('٥'), { value: 5, digits: '5' }, 'Arabic-Indic')
  t.same(read('۱۲'), { value: 12, digits: '12' }, 'Extended Arabic-Indic')
  t.same(read('５'), { value: 5, digits: '5' }, 'fullwidth')
  t.same(read('१२३'), { value: 123, digits: '123' }, 'Devanagari')
  t.same(read('๙'), { value: 9, digits: '9' }, 'Thai')
  t.same(read('1٢３'), { value: 123, digits: '123' }, 'scripts mixed')
  t.same(read('𝟎𝟗'), { value: 9, digits: '9' }, 'mathematical bold, outside the BMP')
  t.same(read('\u{1FBF7}'), { value: 7, digits: '7' }, 'segmented digit seven, the last run in Unicode 14')
  t.same(read('\u{104A9}\u{11D59}'), { value: 99, digits: '99' }, 'the last digit of two astral runs')
  t.same(read('-٩' + '٠'.repeat(20)), { value: -Infinity, digits: '-9' + '0'.repeat(20) }, 'huge, exact')
})

t.test('not a number', async t => {
  for (const bad of [
    '1.0', '0x10', '0o7', '0b1', '1e3', '1E3', 'abc', '5a', 'a5', '1,000', '1 000', '∞', 'NaN', 'Infinity',
    '²', '¹', '⑤', '½', 'Ⅴ', '五', // numeric, but not decimal digits (No, Nl, Lo)
    '\u0665\u0301', // a digit with a combining accent
    '\u065f', '\u066a', '\uff0f', '\uff1a', '\u{1FBEF}', '\u{1FBFA}', // just before and after a run of digits
    '\x005', '5\x00', '\x7f5', '\ufffd', '\ud800', '5\udc00', // NUL, DEL, U+FFFD, lone surrogates
    '\u{11F50}', '\u{1E4F0}' // Kawi and Nag Mundari digits: Unicode 15, unknown to Python 3.11
  ]) t.equal(read(bad), null, show(bad))
})

t.test(`more than ${MAX_STR_DIGITS} digits is a ValueError (sys.get_int_max_str_digits)`, async t => {
  t.equal(read('1'.repeat(MAX_STR_DIGITS))?.digits, '1'.repeat(MAX_STR_DIGITS))
  t.equal(read('1'.repeat(MAX_STR_DIGITS + 1)), null)
  t.equal(read('0'.repeat(MAX_STR_DIGITS + 1)), null, 'leading zeros count')
  t.equal(read(`-${'٣'.repeat(MAX_STR_DIGITS)} `)?.digits, `-${'3'.repeat(MAX_STR_DIGITS)}`)
  t.equal(read(`${'1_'.repeat(MAX_STR_DIGITS - 1)}1`)?.digits.length, MAX_STR_DIGITS, 'underscores do not count')
  t.equal(read(`${'1_'.repeat(MAX_STR_DIGITS)}1`), null)
})

// src/explore/explore-query.ts: companies, limit and offset read by DRF's rules.
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
