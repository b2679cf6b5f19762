// An option declared once: its flag, rule and parser follow from its variable and schema, and a declaration
// that cannot say its rule or parse its text is refused when the module loads, naming the variable.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { declareOption } from '../../src/config/declare-option.js'

t.test('a number option: its flag, its rule from the schema\'s bounds, and its parser', async t => {
  const option = declareOption({ env: 'SOME_LIMIT', schema: Type.Union([Type.Integer({ minimum: 1, maximum: 9 }), Type.Null()]), description: 'd' })
  t.equal(option.flag, '--some-limit')
  t.equal(option.rule, 'a whole number from 1 to 9')
  t.same([option.parse(' 4 '), option.parse('9'), option.parse(' ')], [4, 9, null], 'unset when empty, as it takes null')
  for (const bad of ['0', '10', '4.5', '-1', 'x']) t.throws(() => option.parse(bad), { message: 'must be a whole number from 1 to 9' }, bad)
  const rate = declareOption({ env: 'SOME_RATE', schema: Type.Number({ minimum: 0.5, maximum: 2 }), note: 'an aside', description: 'd' })
  t.same([rate.parse('.5'), rate.parse('2.')], [0.5, 2])
  t.throws(() => rate.parse('2.5'), { message: 'must be a number from 0.5 to 2 (an aside)' }, 'the note after the rule')
  const auto = declareOption({ env: 'SOME_COUNT', schema: Type.Integer({ minimum: 1, maximum: 4 }), auto: () => 2, description: 'd' })
  t.equal(auto.rule, 'a whole number from 1 to 4, or auto', 'an option that takes auto says so')
})

t.test('choices: a short list reads as a sentence, a long one as a list; case does not matter', async t => {
  const choose = (values: string[]) => declareOption({ env: 'SOME_CHOICE', schema: Type.Union(values.map(value => Type.Literal(value))), description: 'd' })
  t.equal(choose(['a', 'b']).rule, 'a or b')
  t.equal(choose(['a', 'b', 'c']).rule, 'a, b or c')
  t.equal(choose(['a', 'b', 'c', 'd']).rule, 'one of a, b, c, d')
  t.equal(choose(['a', 'b']).parse(' B '), 'b')
  t.throws(() => choose(['a', 'b']).parse('c'), { message: 'must be a or b' })
  const statuses = declareOption({ env: 'SOME_STATUS', schema: Type.Union([Type.Literal(404), Type.Literal(503)]), description: 'd' })
  t.equal(statuses.parse('503'), 503, 'a number choice is the number')
})

t.test('a declaration whose schema says no rule, parses no text or leaves a number unbounded is refused, naming it', async t => {
  t.throws(() => declareOption({ env: 'SOME_PATH', schema: Type.String({ minLength: 1 }), description: 'd' }), { name: 'TypeError', message: 'SOME_PATH: its schema says no rule: declare one' })
  t.throws(() => declareOption({ env: 'SOME_LIST', schema: Type.Array(Type.String()), rule: 'a list', description: 'd' }), { name: 'TypeError', message: 'SOME_LIST: its schema parses no text: declare a parser' })
  t.throws(() => declareOption({ env: 'SOME_SIZE', schema: Type.Integer({ minimum: 0 }), description: 'd' }), { name: 'TypeError', message: 'SOME_SIZE: a number declares its minimum and maximum: its rule names them' })
  const list = declareOption({ env: 'SOME_LIST', schema: Type.Array(Type.String()), rule: 'a list', description: 'd', parse: text => text.split(',') })
  t.same(list.parse('a,b'), ['a', 'b'], 'with a parser of its own it is declared')
})
