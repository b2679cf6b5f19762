// Finding where JSON text goes wrong (json-text.ts, findSyntaxError): the place of a bad item's error, found
// the same way on every Node, and agreeing with JSON.parse on what is valid.
import t from 'tap'
import fc from 'fast-check'
import { findSyntaxError, findValue } from '../../../src/snapshot/load/json-text.js'
import { runs } from '../../property-runs.js'

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
