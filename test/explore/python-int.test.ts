// Python's int() on strings; the expected values were checked against CPython 3.11 (/usr/bin/python3).
import t from 'tap'
import { MAX_STR_DIGITS, pythonInt } from '../../src/explore/python-int.js'

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
