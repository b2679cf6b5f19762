// What both snapshot formats' loaders take, how long they work between turns of the event loop, and how
// they name a file they cannot read.

/** Work between two turns of the event loop while a snapshot loads: a reloading service keeps answering. */
export const SLICE_MS = 8

export interface LoadOptions {
  /** At most this many problems are listed for a bad file. */
  problemCap?: number
  /** Overrides the clock, for tests. */
  now?: () => Date
  /** Parse the document whole, skipping the item-by-item path (tests compare the two). */
  whole?: boolean
  /**
   * A bad format v1 file up to this size is parsed whole for a precise report (default
   * load-snapshot.ts, WHOLE_REPORT_BYTES); tests make it small to see the report of a large file.
   */
  wholeReportBytes?: number
  /** Bytes read at a time (tests make it small to cut items, lines and characters). */
  readChunk?: number
  /**
   * Parse threads for the items (both formats); 0: on the loading thread. By default as many as the cores
   * (up to 4) from 16 MiB (parse-threads.ts, threadsFor), none for a smaller file.
   */
  threads?: number
  /** A snapshot is being served while this one loads (a reload): the load leaves a core to the requests. */
  serving?: boolean
  /** Longest line of a JSON Lines file (default read-lines.ts, MAX_LINE_BYTES). */
  maxLineBytes?: number
}

/** An editor-facing reason a file could not be read. */
export function describeReadError (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  switch (code) {
    case 'ENOENT': return 'the file does not exist'
    case 'EACCES':
    case 'EPERM': return 'permission denied'
    case 'EISDIR': return 'the path is a directory, not a file'
    default: return `the file could not be read (${code ?? String(error)})`
  }
}

/** Some editors (Notepad among them) start UTF-8 files with a byte order mark; JSON.parse rejects it. */
export function startsWithBom (bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
}

/**
 * V8's JSON.parse message with its position turned into what an editor can jump to: a line and column of
 * `text` (a whole document), or a column (`text` null: one line of a JSON Lines file).
 */
export function describeSyntaxError (error: Error, text: string | null): string {
  const message = error.message.replace(/^JSON\.parse: /, '')
  const position = /at position (\d+)/.exec(message)
  if (position === null) {
    if (!/Unexpected end of JSON input/.test(message)) return message
    return text === null ? 'the line ends too early' : 'the file ends too early (truncated?)'
  }
  const at = Number(position[1])
  const what = message.replace(/ in JSON at position \d+.*$/, '').replace(/,? ?".*" is not valid JSON$/, '')
  if (text === null) return `${what} at column ${at + 1}`
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return `${what} at line ${line}, column ${at - lineStart + 1}`
}
