// The format v1 streamer: items and members found in bytes that arrive in chunks of any size, each with the
// line and column it starts at; every structural problem refused with its line and column, exactly when
// JSON.parse would refuse the document (or one of its captured values).
import t from 'tap'
import fc from 'fast-check'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DocumentStreamer, MAX_VALUE_NESTING, type DocumentHandlers } from '../../../src/snapshot/load/stream-document.js'
import { Utf8Check, readDocument } from '../../../src/snapshot/load/read-document.js'
import type { TextPosition } from '../../../src/snapshot/load/text-position.js'
import { positionOf } from '../../helpers.js'
import { runs } from '../../property-runs.js'
import { NotFollowed, NotText } from '../../../src/errors.js'

const where = (p: TextPosition): string => `@${p.line}:${p.column}`

/**
 * The handler calls the streamer makes for `raw` fed in chunks of `sizes` bytes (taken in turn); `values`,
 * when given, gets each captured value's text (a member's or an item's) on its own.
 */
function stream (text: string | Buffer, sizes: number | number[], values?: string[]): string[] {
  const seen: string[] = []
  const handlers: DocumentHandlers = {
    member: (key, value, position) => {
      values?.push(value.toString())
      seen.push(`member ${key} ${where(position)} ${value.toString()}`)
    },
    language: (code, position) => seen.push(`language ${code} ${where(position)}`),
    item: (language, index, bytes, position) => {
      values?.push(bytes.toString())
      seen.push(`item ${language}[${index}] ${where(position)} ${bytes.toString()}`)
    }
  }
  const streamer = new DocumentStreamer(handlers)
  const raw = Buffer.isBuffer(text) ? text : Buffer.from(text)
  const cuts = Array.isArray(sizes) ? sizes : [sizes]
  for (let at = 0, k = 0; at < raw.length; k++) {
    const size = cuts[k % cuts.length] as number
    streamer.feed(raw.subarray(at, at + size))
    at += size
  }
  streamer.end()
  return seen
}

/** The message NotFollowed gives for `text` in chunks of `size` (the test fails if there is none). */
function refusal (text: string | Buffer, size: number): string {
  try {
    stream(text, size)
  } catch (error) {
    if (error instanceof NotFollowed) return error.message
    throw error
  }
  return 'accepted'
}

t.test('the streamer finds members, languages and items and where they start, however the bytes are cut', async t => {
  const text = ' {"a": [1, {"b": "]}\\\\\\"["}], "languages": {"en": [ {"x": "}\\\\"} ,\r\n 2, "é\\""\n ], "es": []}, "z": null, "n": -1.5e3} '
  const expected = ['member a @1:8 [1, {"b": "]}\\\\\\"["}]', 'language en @1:45', 'item en[0] @1:53 {"x": "}\\\\"}', 'item en[1] @2:2 2',
    'item en[2] @2:5 "é\\""', 'language es @3:5', 'member z @3:21 null', 'member n @3:32 -1.5e3']
  for (let size = 1; size <= Buffer.byteLength(text); size++) {
    t.same(stream(text, size), expected, `chunks of ${size} bytes`)
  }
})

t.test('each rule broken is refused with its line and column, whatever the chunks', async t => {
  const cases: Array<[string, string]> = [
    ['', 'the document is empty at line 1, column 1'],
    [' \n ', 'the document is empty at line 2, column 2'],
    ['[]', 'the document is not a JSON object at line 1, column 1'],
    ['{"a": 1} x', 'more after the end of the document at line 1, column 10'],
    ['{"a": 1}\n{}', 'more after the end of the document at line 2, column 1'],
    ['{"a": 1,\n "a": 2}', 'the key "a" is given twice at line 2, column 2'],
    ['{"languages": {"en": [],\n  "en": []}}', 'the language "en" is given twice at line 2, column 3'],
    ['{"languages": []}', '`languages` is not an object of arrays at line 1, column 15'],
    ['{"languages": {"en": {}}}', '`languages` is not an object of arrays at line 1, column 22'],
    ['{"languages": {"en": 5}}', '`languages` is not an object of arrays at line 1, column 22'],
    ['{"é" 1}', 'expected \':\' after the key "é" at line 1, column 6'],
    ['{"languages": {"en" []}}', 'expected \':\' after the language "en" at line 1, column 21'],
    ['{"a": 1 "b": 2}', 'expected \',\' or \'}\' after a member at line 1, column 9'],
    ['{"languages": {"en": [] "es": []}}', 'expected \',\' or \'}\' after a language at line 1, column 25'],
    ['{"languages": {"en": [1 2]}}', 'expected \',\' or \']\' after an item at line 1, column 25'],
    ['{"languages": {"en": [{"pk": 1}}]}}', 'expected \',\' or \']\' after an item at line 1, column 32'],
    ['{"a": 1,}', 'a trailing comma before \'}\' at line 1, column 9'],
    ['{"languages": {"en": [],}}', 'a trailing comma before \'}\' at line 1, column 25'],
    ['{"languages": {"en": [1,\n]}}', 'a trailing comma before \']\' at line 2, column 1'],
    ['{"languages": {"en": [,1]}}', 'expected an item or \']\' after \'[\' at line 1, column 23'],
    ['{"languages": {"en": [{"pk": 1},,{"pk": 2}]}}', 'expected an item after \',\' at line 1, column 33'],
    ['{,"a": 1}', 'expected a key or \'}\' after \'{\' at line 1, column 2'],
    ['{"a": 1, 2}', 'expected a key after \',\' at line 1, column 10'],
    ['{"languages": {1: []}}', 'expected a language or \'}\' after \'{\' at line 1, column 16'],
    ['{"languages": {"en": [], 1: []}}', 'expected a language after \',\' at line 1, column 26'],
    ['{"a": }', 'expected a value for the key "a" at line 1, column 7'],
    ['{"\\uzz": 1}', 'a key that is not a valid JSON string at line 1, column 2'],
    ['{"languages": {"e\tn": []}}', 'a key that is not a valid JSON string at line 1, column 16'],
    ['{"a": 1', 'the document ends too early at line 1, column 8'],
    ['{"a": 1}'.slice(0, 5), 'the document ends too early at line 1, column 6'],
    ['{"a": [1,\n2', 'the document ends inside the value that starts at line 1, column 7'],
    ['{"a": "unterminated}', 'the document ends inside the value that starts at line 1, column 7'],
    ['{"languages": {"en": [{"pk": "]}', 'the document ends inside the item that starts at line 1, column 23'],
    ['{"languages": {"e', 'the document ends inside the language that starts at line 1, column 16'],
    ['{\n"ab', 'the document ends inside the key that starts at line 2, column 1']
  ]
  for (const [text, message] of cases) {
    for (const size of [1, 2, 3, 7, 1000]) t.equal(refusal(text, size), message, `${JSON.stringify(text)} in chunks of ${size}`)
  }
})

t.test(`a captured value nests at most ${MAX_VALUE_NESTING} deep, and a deeper one is refused at once`, async t => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)
  for (const size of [1, 7, 1000]) {
    t.equal(stream(`{"a": ${nested(64)}, "languages": {"en": [${nested(64)}]}}`, size).length, 3, `64 levels, chunks of ${size}`)
    t.equal(refusal(`{"a": ${nested(65)}}`, size), 'a value nested deeper than 64 levels at line 1, column 71', `65 levels in a member, chunks of ${size}`)
    t.equal(refusal(`{"languages": {"en": [1,\n {"a": ${nested(65)}}]}}`, size), 'a value nested deeper than 64 levels at line 2, column 71', `65 levels in an item, chunks of ${size}`)
  }
  const deep = Buffer.from(`{"languages": {"en": [${nested(200_000)}]}}`)
  const started = performance.now()
  t.equal(refusal(deep, 65536), 'a value nested deeper than 64 levels at line 1, column 87')
  t.ok(performance.now() - started < 1000, '200,000 levels are refused without following them')
})

/** A JSON value written with random whitespace (CRLF too) between its tokens and random \u escapes in its strings. */
class Writer {
  text = ''
  constructor (private readonly choices: number[]) {}
  private k = 0
  private pick (n: number): number {
    return (this.choices[this.k++ % this.choices.length] as number) % n
  }

  space (): void {
    this.text += ['', '', ' ', '\n', '\r\n  ', '\t'][this.pick(6)] as string
  }

  string (s: string): void {
    let out = ''
    for (const char of JSON.stringify(s).slice(1, -1).match(/\\u[0-9a-f]{4}|\\.|[^]/gu) ?? []) {
      out += char.length === 1 && this.pick(8) === 0 ? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}` : char
    }
    this.text += `"${out}"`
  }

  value (v: unknown): void {
    if (Array.isArray(v)) {
      this.text += '['
      v.forEach((e, i) => { this.space(); if (i > 0) { this.text += ','; this.space() } this.value(e) })
      this.space()
      this.text += ']'
    } else if (v !== null && typeof v === 'object') {
      this.text += '{'
      Object.entries(v).forEach(([key, e], i) => {
        this.space()
        if (i > 0) { this.text += ','; this.space() }
        this.string(key); this.space(); this.text += ':'; this.space(); this.value(e)
      })
      this.space()
      this.text += '}'
    } else if (typeof v === 'string') this.string(v)
    else this.text += JSON.stringify(v)
  }
}

interface Written { raw: Buffer, calls: string[] }

/** A valid v1 document, written at random, and the calls a streamer must make for it (positions by the reference). */
function writeDocument (members: Array<[string, unknown]>, languages: Array<[string, unknown[]]>, at: number, choices: number[]): Written {
  const w = new Writer(choices.length === 0 ? [0] : choices)
  const offsets: Array<[string, number, () => string]> = []
  const bytes = (): number => Buffer.byteLength(w.text)
  const all: Array<[string, unknown]> = [...members]
  all.splice(at % (members.length + 1), 0, ['languages', null])
  w.space()
  w.text += '{'
  all.forEach(([key, value], i) => {
    w.space()
    if (i > 0) { w.text += ','; w.space() }
    w.string(key); w.space(); w.text += ':'; w.space()
    if (key !== 'languages') {
      const from = w.text.length
      offsets.push([`member ${key}`, bytes(), () => w.text.slice(from, end)])
      w.value(value)
      const end = w.text.length
      return
    }
    w.text += '{'
    languages.forEach(([code, items], j) => {
      w.space()
      if (j > 0) { w.text += ','; w.space() }
      offsets.push([`language ${code}`, bytes(), () => ''])
      w.string(code); w.space(); w.text += ':'; w.space(); w.text += '['
      items.forEach((item, n) => {
        w.space()
        if (n > 0) { w.text += ','; w.space() }
        const from = w.text.length
        offsets.push([`item ${code}[${n}]`, bytes(), () => w.text.slice(from, end)])
        w.value(item)
        const end = w.text.length
      })
      w.space()
      w.text += ']'
    })
    w.space()
    w.text += '}'
  })
  w.space()
  w.text += '}'
  w.space()
  const raw = Buffer.from(w.text)
  return { raw, calls: offsets.map(([what, offset, value]) => `${what} ${where(positionOf(raw, offset))}${what.startsWith('language') ? '' : ` ${value()}`}`) }
}

const shallow = fc.jsonValue({ maxDepth: 3 })
const documents = fc.tuple(
  fc.uniqueArray(fc.tuple(fc.string({ unit: 'binary', maxLength: 6 }).filter(k => k !== 'languages'), shallow), { selector: m => m[0], maxLength: 4 }),
  fc.uniqueArray(fc.tuple(fc.string({ unit: 'binary', maxLength: 4 }), fc.array(shallow, { maxLength: 5 })), { selector: l => l[0], maxLength: 3 }),
  fc.nat(),
  fc.array(fc.nat(), { maxLength: 40 })
).map(([members, languages, at, choices]) => writeDocument(members, languages, at, choices))

t.test('a valid document gives the same calls, at the reference positions, however it is written and cut', async t => {
  let items = 0
  fc.assert(fc.property(documents, fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }), (doc, sizes) => {
    const got = stream(doc.raw, sizes)
    items += got.filter(call => call.startsWith('item')).length
    const whole = stream(doc.raw, doc.raw.length)
    return JSON.stringify(got) === JSON.stringify(doc.calls) && JSON.stringify(whole) === JSON.stringify(doc.calls)
  }), { numRuns: runs(400) })
  t.ok(items > 400, `items were tried (${items})`)
})

/**
 * Whether a document JSON.parse accepts is one the streamer follows: an object whose `languages` is an object
 * of arrays, no key given twice in it or in `languages`. A small parser of valid JSON, for its keys only.
 */
function followable (text: string): boolean {
  let i = 0
  const space = (): void => { while (/[ \t\r\n]/.test(text[i] ?? '')) i++ }
  const token = (pattern: RegExp): string => {
    pattern.lastIndex = i
    const match = pattern.exec(text) as RegExpExecArray
    i += match[0].length
    return match[0]
  }
  const STRING = /"(?:[^"\\]|\\.)*"/y
  type Shape = { keys: string[], members: Map<string, Shape> } | 'array' | 'scalar'
  const value = (): Shape => {
    space()
    if (text[i] === '{') {
      i++
      const keys: string[] = []
      const members = new Map<string, Shape>()
      space()
      while (text[i] !== '}') {
        if (text[i] === ',') i++
        space()
        const key = JSON.parse(token(STRING)) as string
        space()
        i++ // the colon
        keys.push(key)
        members.set(key, value())
        space()
      }
      i++
      return { keys, members }
    }
    if (text[i] === '[') {
      i++
      space()
      while (text[i] !== ']') {
        if (text[i] === ',') i++
        value()
        space()
      }
      i++
      return 'array'
    }
    if (text[i] === '"') token(STRING)
    else token(/[^,\]}\s]+/y)
    return 'scalar'
  }
  const top = value()
  if (typeof top !== 'object' || new Set(top.keys).size !== top.keys.length) return false
  const languages = top.members.get('languages')
  if (languages === undefined) return true
  return typeof languages === 'object' && new Set(languages.keys).size === languages.keys.length &&
    [...languages.members.values()].every(shape => shape === 'array')
}

t.test('a byte changed, left out, added or a cut end: refused exactly when JSON.parse refuses (or a captured value is not JSON)', async t => {
  const bytes = fc.constantFrom(...'{}[]:,"\\ \n\t0123456789-.eE+tfnulrsaxé'.split('').map(c => Buffer.from(c)))
  const change = fc.oneof(
    fc.record({ kind: fc.constant('set'), at: fc.nat(), byte: bytes }),
    fc.record({ kind: fc.constant('insert'), at: fc.nat(), byte: bytes }),
    fc.record({ kind: fc.constant('delete'), at: fc.nat(), byte: bytes }),
    fc.record({ kind: fc.constant('cut'), at: fc.nat(), byte: bytes })
  )
  let refused = 0
  let accepted = 0
  fc.assert(fc.property(documents, change, fc.boolean(), fc.integer({ min: 1, max: 40 }), (doc, { kind, at, byte: anyByte }, onPunctuation, size) => {
    let byte = anyByte
    const raw = doc.raw
    // Half the changes at punctuation, where the structure is (most bytes are in strings).
    const punctuation = [...raw.entries()].filter(([, c]) => '{}[],:'.includes(String.fromCharCode(c))).map(([i]) => i)
    const k = onPunctuation ? (punctuation[at % punctuation.length] as number) : at % (raw.length + 1)
    if (onPunctuation) byte = Buffer.from([...'{}[],:"'][at % 7] as string)
    const changed = kind === 'set'
      ? Buffer.concat([raw.subarray(0, k), byte, raw.subarray(k + 1)])
      : kind === 'insert' ? Buffer.concat([raw.subarray(0, k), byte, raw.subarray(k)]) : kind === 'delete' ? Buffer.concat([raw.subarray(0, k), raw.subarray(k + 1)]) : raw.subarray(0, k)
    const text = changed.toString('utf8')
    // The bytes changed may cut a character: the UTF-8 check before the streamer refuses those (below).
    if (!Buffer.from(text).equals(changed)) return true
    let whole = true
    try {
      JSON.parse(text)
    } catch {
      whole = false
    }
    let streamed = true
    let valuesValid = true
    try {
      // Each value on its own: a key may hold anything, '@' and spaces too (a key "@" once failed this).
      const values: string[] = []
      stream(changed, size, values)
      for (const value of values) {
        try {
          JSON.parse(value)
        } catch {
          valuesValid = false
        }
      }
    } catch (error) {
      if (!(error instanceof NotFollowed)) throw error
      streamed = false
    }
    if (!whole) {
      refused++
      return !streamed || !valuesValid
    }
    if (followable(text)) {
      accepted++
      return streamed && valuesValid
    }
    return true
  }), { numRuns: runs(5000) })
  t.ok(refused > 300 && accepted > 300, `both sides of the equivalence are tried (${refused} refused, ${accepted} accepted)`)
})

t.test('UTF-8 is checked across chunk boundaries: a character cut anywhere is whole once joined', async t => {
  const text = Buffer.from('aé€𝄞b'.repeat(3))
  for (let size = 1; size <= text.length; size++) {
    const check = new Utf8Check()
    let ok = true
    for (let at = 0; at < text.length; at += size) ok &&= check.check(text.subarray(at, at + size))
    t.ok(ok && check.end(), `valid in chunks of ${size}`)
  }
  for (const bad of [Buffer.from([0x61, 0xff]), Buffer.from([0xe2, 0x82, 0x41]), Buffer.from([0x80]), Buffer.from([0xc3, 0xa9, 0xe2, 0x82]),
    Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xf4, 0x90, 0x80, 0x80])]) {
    for (let size = 1; size <= bad.length; size++) {
      const check = new Utf8Check()
      let ok = true
      for (let at = 0; at < bad.length; at += size) ok &&= check.check(bad.subarray(at, at + size))
      t.notOk(ok && check.end(), `${bad.toString('hex')} refused in chunks of ${size}`)
    }
  }
})

t.test('a file that is not UTF-8 is refused with the line and column of its first bad byte', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'stream-document-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'snapshot.json')
  const handlers: DocumentHandlers = { member () {}, language () {}, item () {} }
  const cases: Array<[Buffer, string]> = [
    [Buffer.concat([Buffer.from('{"a": "é\n  x'), Buffer.from([0xff]), Buffer.from('"}')]), 'the file is not valid UTF-8 text at line 2, column 4'],
    [Buffer.concat([Buffer.from('\ufeff{"languages": {"en": ["€'), Buffer.from([0xe2, 0x82, 0x41]), Buffer.from('"]}}')]), 'the file is not valid UTF-8 text at line 1, column 25'],
    [Buffer.concat([Buffer.from('{"a": "𝄞'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), 'the file is not valid UTF-8 text at line 1, column 9'],
    [Buffer.concat([Buffer.from('{"a":\r\n"'), Buffer.from([0xe2, 0x82])]), 'the file is not valid UTF-8 text at line 2, column 2'],
    [Buffer.alloc(0), 'the file is empty']
  ]
  for (const [raw, message] of cases) {
    await writeFile(file, raw)
    for (const size of [1, 2, 3, 7, 1000]) {
      await t.rejects(readDocument(file, handlers, size), new NotText(message), `${raw.toString('hex')} in chunks of ${size}`)
    }
  }
})
