// Python's `int(text)` in base 10, as DRF reads `limit`, `offset` and `indent` (LimitOffsetPagination, JSONRenderer).

interface PythonInt {
  /** ±Infinity past 2^53. */
  value: number
  /** Python's `str()` of the value, exact however large. */
  digits: string
}

/** Python 3.10.7+'s int() limit (leading zeros count, underscores do not); past it DRF uses its default. */
export const MAX_STR_DIGITS = 4300

/** Each run of ten decimal digits in Unicode 14.0 (Python 3.11); Node's `\p{Nd}` knows newer ones int() refuses. */
const DIGIT_RUNS = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6,
  0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0,
  0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10, 0x104a0, 0x10d30,
  0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0,
  0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec,
  0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0
]

const ASCII_DIGITS = /^[0-9]+$/

const ZERO: PythonInt = { value: 0, digits: '0' }

function digitValue (code: number): number {
  if (code < 0x660) return code >= 0x30 && code <= 0x39 ? code - 0x30 : -1
  let low = 0
  let high = DIGIT_RUNS.length - 1
  while (low < high) { // the last run starting at or before `code`
    const mid = (low + high + 1) >> 1
    if ((DIGIT_RUNS[mid] as number) <= code) low = mid
    else high = mid - 1
  }
  const value = code - (DIGIT_RUNS[low] as number)
  return value < 10 ? value : -1
}

/** Not `str.isspace()`: int() checks ASCII with C's `Py_ISSPACE`, which lacks \x1c-\x1f. */
function isSpace (code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d)
  return code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000
}

function fromDigits (digits: string, negative: boolean): PythonInt {
  let start = 0
  while (start < digits.length - 1 && digits.charCodeAt(start) === 0x30) start++
  const magnitude = start === 0 ? digits : digits.slice(start)
  if (magnitude === '0') return ZERO
  const number = Number(magnitude)
  const value = Number.isSafeInteger(number) ? number : Infinity
  return negative ? { value: -value, digits: `-${magnitude}` } : { value, digits: magnitude }
}

/** The ASCII digits of the number being read: never more than MAX_STR_DIGITS, whatever the text's length. */
const DIGITS = Buffer.allocUnsafeSlow(MAX_STR_DIGITS)

/** `int(text)`, or null where Python raises ValueError (`1.0`, `0x10`, `1e3`, `²`, `1__0`). */
export function pythonInt (text: string): PythonInt | null {
  if (text.length <= MAX_STR_DIGITS && ASCII_DIGITS.test(text)) return fromDigits(text, false)
  const end = text.length
  let i = 0
  while (i < end && isSpace(text.charCodeAt(i))) i++
  const sign = text.charCodeAt(i)
  if (sign === 0x2b || sign === 0x2d) i++
  let count = 0
  let afterDigit = false
  while (i < end) {
    const code = text.codePointAt(i) as number
    const value = digitValue(code)
    if (value >= 0) {
      // One more than int() reads is a ValueError, whatever follows.
      if (count === MAX_STR_DIGITS) return null
      DIGITS[count++] = 0x30 + value
      afterDigit = true
      i += code > 0xffff ? 2 : 1
    } else if (code === 0x5f && afterDigit) {
      afterDigit = false
      i++
    } else {
      break
    }
  }
  if (!afterDigit) return null
  while (i < end && isSpace(text.charCodeAt(i))) i++
  return i === end ? fromDigits(DIGITS.toString('latin1', 0, count), sign === 0x2d) : null
}
