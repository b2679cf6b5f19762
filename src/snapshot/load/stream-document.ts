// Follows a format v1 document as it arrives, handing over each item and member whole (ADRs 007, 021).
import { PositionCounter, type TextPosition } from './text-position.js'
import { NotFollowed } from '../../errors.js'
import { preview } from './validation-report.js'
import { bytesText, MAX_ITEM_BYTES } from './read-chunks.js'

/** The value itself counting as one. */
export const MAX_VALUE_NESTING = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

/** What a byte is inside a captured container. */
const PLAIN = 0
const STRING_QUOTE = 1
const OPENS = 2
const CLOSES = 3
const KIND = new Uint8Array(256)
KIND[QUOTE] = STRING_QUOTE
KIND[OPEN_BRACE] = OPENS
KIND[OPEN_BRACKET] = OPENS
KIND[CLOSE_BRACE] = CLOSES
KIND[CLOSE_BRACKET] = CLOSES

/** What may follow a value or is never in one. */
const ENDS_SCALAR = new Uint8Array(256)
for (const c of ' \t\r\n,:{}[]"') ENDS_SCALAR[c.charCodeAt(0)] = 1
const STARTS_VALUE = new Uint8Array(256)
for (const c of '"{[-0123456789tfn') STARTS_VALUE[c.charCodeAt(0)] = 1

/** Where the structure outside the captured values is: what may come next. */
const BEFORE = 0 // the top-level `{`
const TOP_FIRST = 1 // a key or `}`
const TOP_KEY = 2 // a key, after a comma
const TOP_COLON = 3
const TOP_VALUE = 4
const TOP_NEXT = 5 // `,` or `}`
const LANGUAGE_FIRST = 6 // a language or `}`
const LANGUAGE_KEY = 7 // a language, after a comma
const LANGUAGE_COLON = 8
const LANGUAGE_VALUE = 9 // its array's `[`
const LANGUAGE_NEXT = 10 // `,` or `}`
const ITEM_FIRST = 11 // an item or `]`
const ITEM = 12 // an item, after a comma
const ITEM_NEXT = 13 // `,` or `]`
const AFTER = 14 // whitespace only

const STRUCTURE = 0
const KEY = 1
const CONTAINER = 2 // a captured object or array
const STRING = 3 // a captured string
const SCALAR = 4 // a captured number, true, false or null

const NOT_OBJECT_OF_ARRAYS = '`languages` is not an object of arrays'

export interface DocumentHandlers {
  /** Not `languages`. The bytes are valid during the call only. */
  member: (key: string, value: Buffer, position: TextPosition) => void
  /** Before its items. */
  language: (code: string, position: TextPosition) => void
  /** The bytes are valid during the call only. */
  item: (language: string, index: number, bytes: Buffer, position: TextPosition) => void
}

function isSpace (c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/** The key or value being followed, whole once it ends: its bytes from earlier chunks, copied. */
class Capture {
  private pieces: Buffer[] = []
  private kept = 0
  /** Its first byte in the current chunk: 0 when it began in an earlier one. */
  private from = 0
  start: TextPosition = { line: 1, column: 1 }

  nextChunk (): void {
    this.from = 0
  }

  begin (at: number, start: TextPosition): void {
    this.from = at
    this.start = start
  }

  /** The chunk ends inside it; its bytes so far. */
  keep (chunk: Buffer): number {
    if (this.from < chunk.length) {
      this.pieces.push(Buffer.from(chunk.subarray(this.from)))
      this.kept += chunk.length - this.from
    }
    return this.kept
  }

  /** It ends before `end`. */
  take (chunk: Buffer, end: number): Buffer {
    const last = chunk.subarray(this.from, end)
    const bytes = this.pieces.length === 0 ? last : Buffer.concat([...this.pieces, last])
    this.pieces = []
    this.kept = 0
    return bytes
  }
}

/** Where the document is: its top-level key, or its language and the item's index there; a key or a language met
 * twice is refused. */
class DocumentPlace {
  key = ''
  language = ''
  index = 0
  private readonly keys = new Set<string>()
  private readonly languages = new Set<string>()

  /** What is wrong with it, or null. */
  enterKey (key: string): string | null {
    if (this.keys.has(key)) return `the key ${preview(key)} is given twice`
    this.keys.add(key)
    this.key = key
    return null
  }

  enterLanguage (code: string): string | null {
    if (this.languages.has(code)) return `the language ${preview(code)} is given twice`
    this.languages.add(code)
    this.language = code
    this.index = 0
    return null
  }
}

/** `closingQuote`'s answer when the chunk ends inside the string on a backslash escaping the next one's first byte. */
const ENDS_ESCAPING = -2

/** After the string's closing quote, or -1 (or ENDS_ESCAPING) when the chunk ends first; an odd run of `\` escapes
 * a quote. */
function closingQuote (chunk: Buffer, start: number): number {
  let i = start
  for (;;) {
    const quote = chunk.indexOf(QUOTE, i)
    const stop = quote === -1 ? chunk.length : quote
    let run = 0
    for (let k = stop - 1; k >= start && chunk[k] === BACKSLASH; k--) run++
    if (quote === -1) return run % 2 === 1 ? ENDS_ESCAPING : -1
    if (run % 2 === 0) return quote + 1
    i = quote + 1
  }
}

/** A key's text, or null: not a valid JSON string. */
function keyText (bytes: Buffer): string | null {
  try {
    return JSON.parse(bytes.toString('utf8')) as string
  } catch {
    return null
  }
}

/** Also refuses a key or language given twice; a captured value is only followed to its end (JSON.parse checks it). */
export class DocumentStreamer {
  private readonly positions = new PositionCounter()
  private state = BEFORE
  private mode = STRUCTURE
  /** The chunk ended on a backslash that escapes the next one's first byte. */
  private escaped = false
  private inString = false
  private nesting = 0
  private readonly capture = new Capture()
  private readonly place = new DocumentPlace()

  constructor (private readonly handlers: DocumentHandlers, private readonly maxItemBytes = MAX_ITEM_BYTES) {}

  get position (): TextPosition {
    return this.positions.current
  }

  feed (chunk: Buffer): void {
    this.positions.begin(chunk)
    this.capture.nextChunk()
    const n = chunk.length
    let i = 0
    while (i < n) {
      switch (this.mode) {
        case STRUCTURE: i = this.followStructure(chunk, i); break
        case CONTAINER: i = this.followContainer(chunk, i); break
        case SCALAR: i = this.followScalar(chunk, i); break
        default: i = this.followString(chunk, i)
      }
    }
    // As a JSON Lines line: an item is a few KB, and a value held whole costs its bytes several times over.
    if (this.mode !== STRUCTURE && this.capture.keep(chunk) > this.maxItemBytes) {
      this.failAtStart(`the ${this.state === ITEM_NEXT ? 'item' : 'value'} that starts here is longer than ${bytesText(this.maxItemBytes)}`)
    }
    this.positions.end()
  }

  end (): void {
    if (this.mode === KEY) {
      this.failAtStart(
        `the document ends inside the ${this.state === TOP_FIRST || this.state === TOP_KEY ? 'key' : 'language'} that starts`
      )
    }
    if (this.mode === CONTAINER || this.mode === STRING) {
      this.failAtStart(`the document ends inside the ${this.state === ITEM_NEXT ? 'item' : 'value'} that starts`)
    }
    if (this.mode === SCALAR || this.state !== AFTER) {
      throw new NotFollowed(
        this.state === BEFORE ? 'the document is empty' : 'the document ends too early', this.positions.current
      )
    }
  }

  private followStructure (chunk: Buffer, from: number): number {
    const n = chunk.length
    for (let i = from; i < n; i++) {
      const c = chunk[i] as number
      if (isSpace(c)) continue
      switch (this.state) {
        case BEFORE:
          if (c !== OPEN_BRACE) this.fail('the document is not a JSON object', i)
          this.state = TOP_FIRST
          break
        case TOP_FIRST:
        case TOP_KEY:
          if (c === QUOTE) return this.beginKey(i)
          if (c === CLOSE_BRACE && this.state === TOP_FIRST) {
            this.state = AFTER
          } else {
            this.fail(c === CLOSE_BRACE
              ? 'a trailing comma before \'}\''
              : this.state === TOP_FIRST ? 'expected a key or \'}\' after \'{\'' : 'expected a key after \',\'', i)
          }
          break
        case TOP_COLON:
          if (c !== COLON) this.fail(`expected ':' after the key ${JSON.stringify(this.place.key)}`, i)
          this.state = TOP_VALUE
          break
        case TOP_VALUE:
          if (this.place.key !== 'languages') {
            return this.beginValue(chunk, i, TOP_NEXT, `expected a value for the key ${JSON.stringify(this.place.key)}`)
          }
          if (c !== OPEN_BRACE) this.fail(NOT_OBJECT_OF_ARRAYS, i)
          this.state = LANGUAGE_FIRST
          break
        case TOP_NEXT:
          if (c === COMMA) this.state = TOP_KEY
          else if (c === CLOSE_BRACE) this.state = AFTER
          else this.fail('expected \',\' or \'}\' after a member', i)
          break
        case LANGUAGE_FIRST:
        case LANGUAGE_KEY:
          if (c === QUOTE) return this.beginKey(i)
          if (c === CLOSE_BRACE && this.state === LANGUAGE_FIRST) {
            this.state = TOP_NEXT
          } else {
            this.fail(c === CLOSE_BRACE
              ? 'a trailing comma before \'}\''
              : this.state === LANGUAGE_FIRST
                ? 'expected a language or \'}\' after \'{\''
                : 'expected a language after \',\'', i)
          }
          break
        case LANGUAGE_COLON:
          if (c !== COLON) this.fail(`expected ':' after the language ${JSON.stringify(this.place.language)}`, i)
          this.state = LANGUAGE_VALUE
          break
        case LANGUAGE_VALUE:
          if (c !== OPEN_BRACKET) this.fail(NOT_OBJECT_OF_ARRAYS, i)
          this.state = ITEM_FIRST
          break
        case LANGUAGE_NEXT:
          if (c === COMMA) this.state = LANGUAGE_KEY
          else if (c === CLOSE_BRACE) this.state = TOP_NEXT
          else this.fail('expected \',\' or \'}\' after a language', i)
          break
        case ITEM_FIRST:
        case ITEM:
          if (c !== CLOSE_BRACKET) {
            return this.beginValue(chunk, i, ITEM_NEXT, this.state === ITEM_FIRST
              ? 'expected an item or \']\' after \'[\''
              : 'expected an item after \',\'')
          }
          if (this.state === ITEM) this.fail('a trailing comma before \']\'', i)
          this.state = LANGUAGE_NEXT
          break
        case ITEM_NEXT:
          if (c === COMMA) this.state = ITEM
          else if (c === CLOSE_BRACKET) this.state = LANGUAGE_NEXT
          else this.fail('expected \',\' or \']\' after an item', i)
          break
        default:
          this.fail('more after the end of the document', i)
      }
    }
    return n
  }

  private beginKey (at: number): number {
    this.mode = KEY
    this.capture.begin(at, this.positions.at(at))
    return at + 1
  }

  /** `next`: what may follow it. */
  private beginValue (chunk: Buffer, at: number, next: number, missing: string): number {
    const c = chunk[at] as number
    if (STARTS_VALUE[c] === 0) this.fail(missing, at)
    this.state = next
    this.capture.begin(at, this.positions.at(at))
    if (c === QUOTE) this.mode = STRING
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.mode = CONTAINER
      this.nesting = 1
    } else this.mode = SCALAR
    return at + 1
  }

  private endValue (chunk: Buffer, end: number): void {
    const bytes = this.capture.take(chunk, end)
    this.mode = STRUCTURE
    if (this.state === ITEM_NEXT) this.handlers.item(this.place.language, this.place.index++, bytes, this.capture.start)
    else this.handlers.member(this.place.key, bytes, this.capture.start)
  }

  /** The hot loop: only brackets and strings matter. */
  private followContainer (chunk: Buffer, from: number): number {
    const n = chunk.length
    let i = from
    if (this.inString) {
      const end = this.stringEnd(chunk, i)
      if (end === -1) return n
      this.inString = false
      i = end
    }
    let nesting = this.nesting
    while (i < n) {
      const kind = KIND[chunk[i] as number]
      if (kind === PLAIN) {
        i++
        continue
      }
      if (kind === STRING_QUOTE) {
        const end = this.stringEnd(chunk, i + 1)
        if (end === -1) {
          this.inString = true
          break
        }
        i = end
        continue
      }
      if (kind === OPENS) {
        if (++nesting > MAX_VALUE_NESTING) this.fail(`a value nested deeper than ${MAX_VALUE_NESTING} levels`, i)
      } else if (--nesting === 0) {
        this.endValue(chunk, i + 1)
        return i + 1
      }
      i++
    }
    this.nesting = nesting
    return n
  }

  /** JSON.parse checks it later. */
  private followScalar (chunk: Buffer, from: number): number {
    const n = chunk.length
    for (let i = from; i < n; i++) {
      if (ENDS_SCALAR[chunk[i] as number] === 1) {
        this.endValue(chunk, i)
        return i
      }
    }
    return n
  }

  private followString (chunk: Buffer, from: number): number {
    const end = this.stringEnd(chunk, from)
    if (end === -1) return chunk.length
    if (this.mode === STRING) this.endValue(chunk, end)
    else this.endKey(chunk, end)
    return end
  }

  /** After its quote, or -1: the chunk ends first. */
  private stringEnd (chunk: Buffer, from: number): number {
    const end = closingQuote(chunk, this.escaped ? from + 1 : from)
    this.escaped = end === ENDS_ESCAPING
    return end < 0 ? -1 : end
  }

  private endKey (chunk: Buffer, end: number): void {
    const key = keyText(this.capture.take(chunk, end))
    this.mode = STRUCTURE
    if (key === null) this.failAtStart('a key that is not a valid JSON string')
    const top = this.state === TOP_FIRST || this.state === TOP_KEY
    const refused = top ? this.place.enterKey(key) : this.place.enterLanguage(key)
    if (refused !== null) this.failAtStart(refused)
    this.state = top ? TOP_COLON : LANGUAGE_COLON
    if (!top) this.handlers.language(key, this.capture.start)
  }

  private fail (reason: string, at: number): never {
    throw new NotFollowed(reason, this.positions.at(at))
  }

  private failAtStart (reason: string): never {
    throw new NotFollowed(reason, this.capture.start)
  }
}
