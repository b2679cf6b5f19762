// Line and column as an editor shows them, counted chunk by chunk: the same as counted over the whole text.
import t from 'tap'
import fc from 'fast-check'
import { PositionCounter, countCharacters, positionAfter, type TextPosition } from '../../../src/snapshot/load/text-position.js'
import { positionOf } from '../../helpers.js'
import { runs } from '../../property-runs.js'

/** Text of every kind a column must count right: ASCII, 2-, 3- and 4-byte characters, LF, CRLF, long lines. */
const text = fc.array(fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('\n', '\r\n', 'é', '€', '𝄞', 'x'.repeat(300), 'ü'.repeat(150))
), { maxLength: 30 }).map(parts => Buffer.from(parts.join('')))

t.test('countCharacters counts the lead bytes of any range, at any alignment', async t => {
  fc.assert(fc.property(text, fc.nat(), fc.nat(), fc.nat({ max: 7 }), (raw, a, b, shift) => {
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
  fc.assert(fc.property(text, fc.array(fc.nat(), { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1 }), (raw, picks, sizes) => {
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
  fc.assert(fc.property(text, fc.nat(), (raw, cut) => {
    const split = raw.length === 0 ? 0 : cut % raw.length
    return JSON.stringify(positionAfter(positionOf(raw, split), raw.subarray(split))) === JSON.stringify(positionOf(raw, raw.length))
  }), { numRuns: runs(300) })
  t.same(positionAfter({ line: 3, column: 5 }, Buffer.from('ab\r\néé')), { line: 4, column: 3 })
})
