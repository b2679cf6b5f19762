// What the loader says about JSON text: a byte order mark, V8's JSON.parse errors turned into what an editor
// can jump to, and positions (line and column) inside a file.

/** A place in a file as an editor shows it: both from 1; the column counts characters from the line's start. */
export interface TextPosition {
  line: number
  column: number
}

/** Some editors (Notepad among them) start UTF-8 files with a byte order mark; JSON.parse rejects it. */
export function startsWithBom (bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
}

/** V8's JSON.parse error as what is wrong, and where in the parsed string (a UTF-16 index), if it says. */
export function syntaxError (error: Error): { what: string, index: number | null } {
  const message = error.message.replace(/^JSON\.parse: /, '')
  const position = /at position (\d+)/.exec(message)
  if (position === null) {
    return { what: /Unexpected end of JSON input/.test(message) ? 'the text ends too early' : message, index: null }
  }
  const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/,? ?"[\s\S]*" is not valid JSON$/, '')
  return { what, index: Number(position[1]) }
}

/**
 * A JSON Lines line's syntax error: V8's message with its position as a column of the line (`text` is the
 * line as parsed).
 */
export function describeLineSyntaxError (error: Error): string {
  const { what, index } = syntaxError(error)
  if (index === null) return what === 'the text ends too early' ? 'the line ends too early' : what
  return `${what} at column ${index + 1}`
}

/**
 * Where `index` (a UTF-16 index into `text`) is in the file, `text` starting at `start`: an error inside an
 * item, located from the item's own position.
 */
export function positionIn (text: string, index: number, start: TextPosition): TextPosition {
  let line = start.line
  let lineStart = -1
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i
  }
  return lineStart === -1 ? { line, column: start.column + index } : { line, column: index - lineStart }
}
