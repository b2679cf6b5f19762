import t from 'tap'
import fc from 'fast-check'
import {
  compareCodePoints, fieldCount, parseQuery, quotePlus, unquotePlus
} from '../../src/explore/query-string.js'
import { runs } from '../property-runs.js'

// Expected values are what CPython 3.11 answers for the same input.
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
