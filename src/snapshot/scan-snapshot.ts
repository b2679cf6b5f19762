// Finds the parts of a snapshot document in its bytes without building it: each item's byte range,
// each language, the other top-level members. The loader then parses items one at a time, so a
// 280 MB file never becomes one 280 MB string and a graph of millions of objects.
//
// The scanner only finds boundaries; JSON.parse still checks every byte between them. Anything it does not
// expect (a syntax error, `languages` not an object of arrays, a repeated key) makes it give up, and the
// loader falls back to parsing the whole document, which then reports the problem precisely.

import { runToEnd } from './slices.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

export interface ScanHandlers {
  /** A top-level member other than `languages`, its value's bytes [start, end). */
  member: (key: string, start: number, end: number) => void
  language: (code: string) => void
  /** An element of a language's array, its bytes [start, end). */
  item: (language: string, index: number, start: number, end: number) => void
}

class GiveUp extends Error {}

function isSpace (c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/** Scans in one go: true when the document was followed to its end. */
export function scanSnapshot (buf: Buffer, from: number, handlers: ScanHandlers): boolean {
  return runToEnd(scanSteps(buf, from, handlers))
}

/**
 * The scan as steps, yielding every few thousand items, so a caller can give the event loop a turn (the
 * scan of a 280 MB document is ~0.5 s). Returns true when the document was followed to its end.
 */
export function * scanSteps (buf: Buffer, from: number, handlers: ScanHandlers): Generator<void, boolean> {
  try {
    yield * scan(buf, from, handlers)
    return true
  } catch (error) {
    if (error instanceof GiveUp) return false
    throw error
  }
}

/** Items between two points where a scan may pause. */
const STEP_ITEMS = 2048

function * scan (buf: Buffer, from: number, handlers: ScanHandlers): Generator<void, void> {
  const n = buf.length
  let i = from

  const skipSpace = () => { while (isSpace(buf[i])) i++ }
  const expect = (c: number) => {
    skipSpace()
    if (buf[i] !== c) throw new GiveUp()
    i++
  }
  /** i at an opening quote → i after the closing one. */
  const skipString = () => {
    i++
    for (;;) {
      const c = buf[i]
      if (c === QUOTE) { i++; return }
      if (c === BACKSLASH) i += 2
      else if (c === undefined) throw new GiveUp()
      else i++
    }
  }
  const readKey = (): string => {
    skipSpace()
    if (buf[i] !== QUOTE) throw new GiveUp()
    const start = i
    skipString()
    return JSON.parse(buf.toString('utf8', start, i)) as string
  }
  /** i at a value → i after it (strings, objects and arrays followed through; scalars to a delimiter). */
  const skipValue = () => {
    skipSpace()
    const c = buf[i]
    if (c === QUOTE) return skipString()
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      let depth = 0
      while (i < n) {
        const d = buf[i] as number
        if (d === QUOTE) { skipString(); continue }
        if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++
        else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
          if (--depth === 0) { i++; return }
        }
        i++
      }
      throw new GiveUp()
    }
    const start = i
    while (i < n) {
      const d = buf[i]
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break
      i++
    }
    if (i === start) throw new GiveUp()
  }
  /** Runs `each` per member of the object at i; leaves i after its closing brace. */
  const members = function * (each: (key: string) => Generator<void, void>): Generator<void, void> {
    expect(OPEN_BRACE)
    skipSpace()
    if (buf[i] === CLOSE_BRACE) { i++; return }
    const seen = new Set<string>()
    for (;;) {
      const key = readKey()
      // JSON.parse keeps the last of repeated keys; rather than mimic that, let it decide.
      if (seen.has(key)) throw new GiveUp()
      seen.add(key)
      expect(COLON)
      yield * each(key)
      skipSpace()
      if (buf[i] === COMMA) { i++; continue }
      if (buf[i] === CLOSE_BRACE) { i++; return }
      throw new GiveUp()
    }
  }

  yield * members(function * (key) {
    if (key !== 'languages') {
      skipSpace()
      const start = i
      skipValue()
      handlers.member(key, start, i)
      return
    }
    skipSpace()
    if (buf[i] !== OPEN_BRACE) throw new GiveUp()
    yield * members(function * (language) {
      handlers.language(language)
      expect(OPEN_BRACKET)
      skipSpace()
      if (buf[i] === CLOSE_BRACKET) { i++; return }
      for (let index = 0; ; index++) {
        skipSpace()
        const start = i
        skipValue()
        handlers.item(language, index, start, i)
        if (index % STEP_ITEMS === STEP_ITEMS - 1) yield
        skipSpace()
        if (buf[i] === COMMA) { i++; continue }
        if (buf[i] === CLOSE_BRACKET) { i++; return }
        throw new GiveUp()
      }
    })
  })
  skipSpace()
  if (i !== n) throw new GiveUp()
}
