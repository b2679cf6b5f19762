// Places in a snapshot's text an editor can jump to: where JSON text goes wrong, found the same way on every Node and
// agreeing with JSON.parse on what is valid; a byte's line and column counted chunk by chunk, as over the whole text.
import t from 'tap'
import fc from 'fast-check'
import { findSyntaxError, findValue } from '../../../src/snapshot/load/json-text.js'
import { PositionCounter, countCharacters, positionAfter, type TextPosition } from '../../../src/snapshot/load/text-position.js'
import { positionOf } from '../../helpers.js'
import { runs } from '../../property-runs.js'

// src/snapshot/load/json-text.ts: findSyntaxError, the place and reason of an error; findValue, a problem's place by its pointer.
t.test('findSyntaxError agrees with JSON.parse on what is valid, for valid text and corruptions of it', async t => {
  const corrupted = fc.tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', ':', 'x', '\\', '\n', '{', '[', '1', ' '), fc.constantFrom('insert', 'replace', 'cut'))
    .map(([text, at, piece, how]) => {
      const i = text.length === 0 ? 0 : at % text.length
      return how === 'insert' ? text.slice(0, i) + piece + text.slice(i) : how === 'replace' ? text.slice(0, i) + piece + text.slice(i + 1) : text.slice(0, i)
    })
  fc.assert(fc.property(fc.oneof(fc.json(), corrupted), text => {
    let valid = true
    try { JSON.parse(text) } catch { valid = false }
    return (findSyntaxError(text) === null) === valid
  }), { numRuns: runs(5000) })
  t.pass('5,000 texts')
})

t.test('the place and the reason of an error', async t => {
  t.same(findSyntaxError('{"pk": 2,\n "x": tru}'), { index: 16, what: 'unexpected "t" where a value belongs' })
  t.same(findSyntaxError('[1,, 2]'), { index: 3, what: 'unexpected "," where a value belongs' })
  t.same(findSyntaxError('{"a": 1,}'), { index: 8, what: 'a trailing comma before "}"' })
  t.same(findSyntaxError('{"a" 1}'), { index: 5, what: 'expected \':\' after the key' })
  t.same(findSyntaxError('{"a": 1'), { index: 7, what: 'the text ends too early' })
  t.same(findSyntaxError('{"a": "\\q"}'), { index: 6, what: 'a string that does not end, or holds a raw control character or a bad escape' })
  t.equal(findSyntaxError('{"a": [1, {"b": null}], "c": "\\u00e9"}'), null)
})

/** Every value in `value` with its JSON Pointer (escaped as TypeBox's errors name it) and its depth. */
function * valuesOf (value: unknown, pointer = '', depth = 0): Generator<[string, unknown, number]> {
  yield [pointer, value, depth]
  if (value === null || typeof value !== 'object') return
  for (const [key, child] of Object.entries(value)) {
    yield * valuesOf(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1)
  }
}

t.test('findValue finds every value of a document by its pointer, compact or pretty-printed (a problem\'s place)', async t => {
  fc.assert(fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
    const bytes = Buffer.from(pretty ? ` ${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value))
    for (const [pointer, sub, depth] of valuesOf(value)) {
      const { offset, depth: found } = findValue(bytes, pointer)
      // A value pretty-printed at depth d: its own lines indented 2d more.
      const text = pretty ? JSON.stringify(sub, null, 2).replace(/\n/g, `\n${' '.repeat(2 * depth)}`) : JSON.stringify(sub)
      if (found !== depth || !bytes.subarray(offset).toString().startsWith(text)) return false
    }
    return true
  }), { numRuns: runs(2000) })
  t.pass('2,000 documents')
})

t.test('findValue: a missing value is placed at the deepest one there; a repeated key is its last', async t => {
  const bytes = Buffer.from('{"a": {"b": [10, {"c": "]}\\"x"}]}, "d~/e": 1, "a": {"b": [20, {"c": 2}]}}')
  const at = (pointer: string) => { const { offset, depth } = findValue(bytes, pointer); return [bytes.subarray(offset, offset + 4).toString(), depth] }
  t.same(at(''), ['{"a"', 0])
  t.same(at('/a/b/1/c'), ['2}]}', 4], 'the last "a", as JSON.parse keeps')
  t.same(at('/a/b/1/missing'), ['{"c"', 3])
  t.same(at('/a/b/7'), ['[20,', 2], 'past the end of an array')
  t.same(at('/d~0~1e'), ['1, "', 1], 'escaped tokens')
  t.same(at('/a/b/x'), ['[20,', 2], 'no index')
})

// src/snapshot/load/text-position.ts: line and column as an editor shows them, the same however the text is cut.
/** Text of every kind a column must count right: ASCII, 2-, 3- and 4-byte characters, LF, CRLF, long lines. */
const utf8Text = fc.array(fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('\n', '\r\n', 'é', '€', '𝄞', 'x'.repeat(300), 'ü'.repeat(150))
), { maxLength: 30 }).map(parts => Buffer.from(parts.join('')))

t.test('countCharacters counts the lead bytes of any range, at any alignment', async t => {
  fc.assert(fc.property(utf8Text, fc.nat(), fc.nat(), fc.nat({ max: 7 }), (raw, a, b, shift) => {
    // A buffer that starts `shift` bytes into its memory, as a pooled Buffer may.
    const bytes = Buffer.concat([Buffer.alloc(shift), raw]).subarray(shift)
    const from = raw.length === 0 ? 0 : Math.min(a, b) % (raw.length + 1)
    const to = raw.length === 0 ? 0 : from + (Math.max(a, b) % (raw.length - from + 1))
    let lead = 0
    for (let i = from; i < to; i++) if (((raw[i] as number) & 0xc0) !== 0x80) lead++
    return countCharacters(bytes, from, to) === lead
  }), { numRuns: runs(500) })
})

t.test('PositionCounter gives the reference position of any increasing offsets, however the text is cut', async t => {
  fc.assert(fc.property(utf8Text, fc.array(fc.nat(), { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1 }), (raw, picks, sizes) => {
    const wanted = [...new Set(picks.map(p => raw.length === 0 ? 0 : p % raw.length))].sort((x, y) => x - y)
    const counter = new PositionCounter()
    const got: TextPosition[] = []
    let at = 0
    let k = 0
    for (let cut = 0; at < raw.length; cut++) {
      const size = sizes[cut % sizes.length] as number
      const chunk = raw.subarray(at, at + size)
      counter.begin(chunk)
      while (k < wanted.length && (wanted[k] as number) < at + chunk.length) got.push(counter.at((wanted[k++] as number) - at))
      counter.end()
      at += chunk.length
    }
    const end = counter.current
    const whole = positionOf(raw, raw.length)
    return JSON.stringify(got) === JSON.stringify(wanted.slice(0, got.length).map(o => positionOf(raw, o))) &&
      got.length === (raw.length === 0 ? 0 : wanted.length) && end.line === whole.line && end.column === whole.column
  }), { numRuns: runs(500) })
})

t.test('positionAfter goes on from a position over more bytes', async t => {
  fc.assert(fc.property(utf8Text, fc.nat(), (raw, cut) => {
    const split = raw.length === 0 ? 0 : cut % raw.length
    return JSON.stringify(positionAfter(positionOf(raw, split), raw.subarray(split))) === JSON.stringify(positionOf(raw, raw.length))
  }), { numRuns: runs(300) })
  t.same(positionAfter({ line: 3, column: 5 }, Buffer.from('ab\r\néé')), { line: 4, column: 3 })
})
