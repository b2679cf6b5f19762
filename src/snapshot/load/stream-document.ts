// Follows a snapshot document (format v1) as its bytes arrive, chunk by chunk, and hands over each item's
// bytes as soon as they are whole: the loader parses items one at a time, so no file of any size becomes
// one Buffer, one string or a graph of millions of objects.
//
// It only finds boundaries; JSON.parse checks the bytes. Every item and every other top-level member is
// parsed on its own. The commas between a language's items are checked here; the rest between the values
// (braces, keys, commas, colons) is kept as a skeleton, a `0` in place of each member's value and a
// language's array as `[]`, that is parsed at the end: the document is valid JSON exactly when the
// skeleton and every value are. Anything the streamer does not expect (`languages` not an object of arrays,
// a key given twice, bytes after the end) makes it give up: the loader then reports the file as a whole.

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a
const ZERO = Buffer.from('0')
const BETWEEN_ITEMS = 'not valid JSON between the items'

export interface DocumentHandlers {
  /** A top-level member other than `languages`, its value's bytes (valid only during the call). */
  member: (key: string, value: Buffer) => void
  /** A key of `languages`, before its items. */
  language: (code: string) => void
  /** An element of a language's array, its bytes (valid only during the call). */
  item: (language: string, index: number, bytes: Buffer) => void
}

/** The document is not one the streamer follows (or not JSON at all); `at` is a byte offset in the file. */
export class NotFollowed extends Error {
  override readonly name = 'NotFollowed'

  constructor (readonly reason: string, readonly at: number) {
    super(`${reason} (at byte ${at})`)
  }
}

/**
 * Bytes appended into one growing buffer, copied out of the chunks they were read in (which are not kept):
 * the skeleton, a few bytes per top-level member and language.
 */
class ByteSink {
  private bytes = Buffer.allocUnsafe(4096)
  private length = 0

  push (piece: Uint8Array): void {
    if (this.length + piece.length > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + piece.length))
      this.bytes.copy(grown, 0, 0, this.length)
      this.bytes = grown
    }
    this.bytes.set(piece, this.length)
    this.length += piece.length
  }

  text (): string {
    return this.bytes.toString('utf8', 0, this.length)
  }
}

function isSpace (c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/**
 * Where the streamer is. Containers below the items (an item's own objects and arrays) are counted, not
 * told apart: an item's bytes are parsed whole anyway.
 */
export class DocumentStreamer {
  /** Bytes fed so far: file offsets of what comes next. */
  private base = 0
  private depth = 0
  private inString = false
  private escaped = false
  /** The key being read (top level or a language), its bytes; null when not reading one. */
  private keyPieces: Buffer[] | null = null
  /** Depth 1: the top-level object expects a key next. Depth 2 in `languages`: likewise. */
  private expectKey = false
  private topKey: string | null = null
  private language: string | null = null
  private readonly topKeys = new Set<string>()
  private languageKeys = new Set<string>()
  private inLanguages = false
  /** A member's value or an item comes next: after a top-level key's colon, a language's `[` or a comma. */
  private awaitingValue = false
  private index = 0
  /** The value being captured (a member's or an item's), its pieces; null when none. */
  private capture: Buffer[] | null = null
  /** The depth a captured value started at: it ends when the depth comes back to it. */
  private captureDepth = 0
  /** A captured scalar (number, true, false, null) ends at the next delimiter, not at a bracket. */
  private captureScalar = false
  private readonly skeleton = new ByteSink()
  private ended = false

  constructor (private readonly handlers: DocumentHandlers) {}

  /** Follows `chunk`; throws NotFollowed. */
  feed (chunk: Buffer): void {
    let i = 0
    const n = chunk.length
    /** Where the current run of skeleton bytes (not captured) starts in this chunk. */
    let skeletonFrom = this.capture === null && !this.inLanguages ? 0 : -1
    /** Where the current capture starts in this chunk (-1: it started in an earlier chunk, or none). */
    let captureFrom = this.capture === null ? -1 : 0
    const beginCapture = (at: number, scalar: boolean) => {
      if (skeletonFrom >= 0 && at > skeletonFrom) this.skeleton.push(chunk.subarray(skeletonFrom, at))
      // An item leaves nothing in the skeleton: its array's commas are checked here (structure), so a
      // language's array stays `[]` there, not a `0` and its separator for every item (16 MB and a
      // 72 ms JSON.parse at the end of a 1M load).
      if (!this.inLanguages) this.skeleton.push(ZERO)
      skeletonFrom = -1
      this.capture = []
      this.awaitingValue = false
      captureFrom = at
      this.captureDepth = this.depth
      this.captureScalar = scalar
    }
    const endCapture = (end: number) => {
      const pieces = this.capture as Buffer[]
      const last = chunk.subarray(Math.max(captureFrom, 0), end)
      const bytes = pieces.length === 0 ? last : Buffer.concat([...pieces, last])
      this.capture = null
      captureFrom = -1
      skeletonFrom = this.inLanguages ? -1 : end
      if (this.inLanguages) this.handlers.item(this.language as string, this.index++, bytes)
      else this.handlers.member(this.topKey as string, bytes)
    }

    while (i < n) {
      if (this.ended) {
        if (!isSpace(chunk[i] as number)) throw new NotFollowed('more after the end of the document', this.base + i)
        i++
        continue
      }
      if (this.inString) {
        i = this.skipString(chunk, i)
        if (!this.inString && this.capture !== null && this.captureScalar && this.depth === this.captureDepth) endCapture(i)
        else if (!this.inString && this.keyPieces !== null) this.keyEnds()
        continue
      }
      const c = chunk[i] as number
      if (this.capture !== null && this.captureScalar && this.depth === this.captureDepth) {
        // A number, true, false or null runs to the next delimiter.
        if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)) {
          endCapture(i)
          continue
        }
        i++
        continue
      }
      if (isSpace(c)) { i++; continue }
      if (this.capture !== null) {
        // Inside a captured container: only its nesting and strings matter.
        if (c === QUOTE) { this.inString = true; i++; continue }
        if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++
        else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
          this.depth--
          if (this.depth === this.captureDepth) { endCapture(i + 1); i++; continue }
        }
        i++
        continue
      }
      // Outside any captured value: the document's own structure.
      if (this.awaitingValue && c !== CLOSE_BRACKET && c !== COMMA) {
        if (c === QUOTE) {
          beginCapture(i, true)
          this.inString = true
          i++
          continue
        }
        if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          beginCapture(i, false)
          this.depth++
          i++
          continue
        }
        if (c === CLOSE_BRACE) throw new NotFollowed('a value is missing', this.base + i)
        beginCapture(i, true)
        i++
        continue
      }
      this.structure(c, this.base + i)
      // Into a language's array, its `[` the last of the skeleton until its `]`; out of it, from its `]` on.
      if (c === OPEN_BRACKET && this.inLanguages) {
        if (skeletonFrom >= 0) this.skeleton.push(chunk.subarray(skeletonFrom, i + 1))
        skeletonFrom = -1
      } else if (c === CLOSE_BRACKET) skeletonFrom = i
      i++
    }
    if (this.capture !== null) {
      this.capture.push(Buffer.from(chunk.subarray(Math.max(captureFrom, 0))))
    } else if (skeletonFrom >= 0 && skeletonFrom < n) {
      this.skeleton.push(chunk.subarray(skeletonFrom))
    }
    this.base += n
  }

  /** Checks what came is one whole document; throws NotFollowed. */
  end (): void {
    if (this.capture !== null && this.captureScalar && this.depth === this.captureDepth && !this.inString) {
      throw new NotFollowed('the document ends inside a value', this.base)
    }
    if (!this.ended) throw new NotFollowed('the document ends too early', this.base)
    // The structure between the values, with each value a 0: valid JSON exactly when the document's is.
    try {
      JSON.parse(this.skeleton.text())
    } catch {
      throw new NotFollowed(BETWEEN_ITEMS, this.base)
    }
  }

  /**
   * Inside a string at `from`: returns where it ends (after its closing quote), or the chunk's end when it
   * goes on in the next chunk. A quote ends it unless an odd run of backslashes comes before it.
   */
  private skipString (chunk: Buffer, from: number): number {
    let i = from
    if (this.escaped) {
      // The previous chunk ended on a backslash: this chunk's first byte is the escaped one.
      this.escaped = false
      i++
    }
    const start = i
    for (;;) {
      const quote = chunk.indexOf(QUOTE, i)
      const stop = quote === -1 ? chunk.length : quote
      let run = 0
      for (let k = stop - 1; k >= start && chunk[k] === BACKSLASH; k--) run++
      if (quote === -1) {
        this.escaped = run % 2 === 1
        this.collectKey(chunk, from, chunk.length)
        return chunk.length
      }
      if (run % 2 === 1) {
        i = quote + 1
        continue
      }
      this.inString = false
      this.collectKey(chunk, from, quote + 1)
      return quote + 1
    }
  }

  private collectKey (chunk: Buffer, from: number, to: number): void {
    if (this.keyPieces !== null) this.keyPieces.push(Buffer.from(chunk.subarray(from, to)))
  }

  /** A key's closing quote was just read (its bytes are in keyPieces, quotes included). */
  private keyEnds (): void {
    let key: string
    try {
      key = JSON.parse(Buffer.concat(this.keyPieces as Buffer[]).toString('utf8')) as string
    } catch {
      throw new NotFollowed('a key that is not a valid JSON string', this.base)
    }
    this.keyPieces = null
    this.expectKey = false
    if (this.depth === 1) {
      if (this.topKeys.has(key)) throw new NotFollowed(`the key "${key}" is given twice`, this.base)
      this.topKeys.add(key)
      this.topKey = key
    } else {
      if (this.languageKeys.has(key)) throw new NotFollowed(`the language "${key}" is given twice`, this.base)
      this.languageKeys.add(key)
      this.language = key
      this.index = 0
      this.handlers.language(key)
    }
  }

  /** A structural byte outside any captured value. */
  private structure (c: number, at: number): void {
    const { depth } = this
    if (c === QUOTE) {
      if (!this.expectKey || (depth !== 1 && !(depth === 2 && this.topKey === 'languages'))) {
        throw new NotFollowed('a string where none belongs', at)
      }
      this.inString = true
      this.keyPieces = [Buffer.from('"')]
      return
    }
    if (c === OPEN_BRACE) {
      if (depth === 0) {
        this.depth = 1
        this.expectKey = true
        return
      }
      if (depth === 1 && this.topKey === 'languages' && !this.expectKey && !this.inLanguages) {
        this.depth = 2
        this.expectKey = true
        this.languageKeys = new Set()
        return
      }
      throw new NotFollowed(depth === 0 ? 'the document is not a JSON object' : '`languages` is not an object of arrays', at)
    }
    if (c === OPEN_BRACKET) {
      if (depth === 2 && this.topKey === 'languages' && !this.expectKey && this.language !== null && !this.inLanguages) {
        this.depth = 3
        this.inLanguages = true
        this.awaitingValue = true
        return
      }
      throw new NotFollowed(depth === 0 ? 'the document is not a JSON object' : '`languages` is not an object of arrays', at)
    }
    if (c === CLOSE_BRACKET) {
      if (depth !== 3) throw new NotFollowed('a `]` where none belongs', at)
      // Awaiting an item after one came: a trailing comma (a comma with none before it is caught below).
      if (this.awaitingValue && this.index > 0) throw new NotFollowed(BETWEEN_ITEMS, at)
      this.awaitingValue = false
      this.depth = 2
      this.inLanguages = false
      this.language = null
      return
    }
    if (c === CLOSE_BRACE) {
      if (depth === 1) {
        this.depth = 0
        this.ended = true
        return
      }
      if (depth === 2) {
        this.depth = 1
        this.topKey = null
        return
      }
      throw new NotFollowed('a `}` where none belongs', at)
    }
    if (c === COMMA) {
      if (depth === 1 || depth === 2) this.expectKey = true
      if (depth === 1) this.topKey = null
      if (depth === 3) {
        // Right after the `[` or another comma: a comma with no item before it.
        if (this.awaitingValue) throw new NotFollowed(BETWEEN_ITEMS, at)
        this.awaitingValue = true
      }
      return
    }
    if (c === COLON) {
      if (depth === 1 && this.topKey !== null && this.topKey !== 'languages') this.awaitingValue = true
      return
    }
    throw new NotFollowed(depth === 0 ? 'the document is not a JSON object' : 'unexpected bytes between the items', at)
  }
}
