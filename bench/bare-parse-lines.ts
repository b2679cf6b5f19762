// The load floor for JSON Lines: the file read line by line and each line JSON.parse'd, in its own plain-node
// process, which then holds the parsed lines and idles until killed. Typechecked here; bench/run.ts runs it
// as plain JavaScript (plain-script.ts: no tsx, no imports beyond node:), so the floor pays no loader.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'

declare global {
  // Kept reachable: a settled RSS without the parsed lines would measure nothing.
  var parsedSnapshot: unknown
}

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: node bench/.data/bare-parse-lines.mjs SNAPSHOT.jsonl (bench/run.ts writes it from bench/bare-parse-lines.ts)')
  process.exit(1)
}
const lines: unknown[] = []
// readline: Node's own line splitter, the plainest way to read a file a line at a time.
for await (const line of createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
  if (line.trim() !== '') lines.push(JSON.parse(line))
}
globalThis.parsedSnapshot = lines
process.stdout.write(`parsed ${lines.length} lines\n`)
setInterval(() => {}, 1 << 30)
