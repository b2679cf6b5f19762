// Finding where JSON text goes wrong (json-text.ts, findSyntaxError): the place of a bad item's error, found
// the same way on every Node, and agreeing with JSON.parse on what is valid.
import t from 'tap'
import fc from 'fast-check'
import { findSyntaxError } from '../../../src/snapshot/load/json-text.js'
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
