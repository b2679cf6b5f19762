// The load floor for JSON Lines: the file read line by line and each line JSON.parse'd, in its own plain-node
// process (no tsx, no imports beyond node:), which then holds the parsed lines and idles until killed.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: node bench/bare-parse-lines.mjs SNAPSHOT.jsonl')
  process.exit(1)
}
const lines = []
// readline: Node's own line splitter, the plainest way to read a file a line at a time.
for await (const line of createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
  if (line.trim() !== '') lines.push(JSON.parse(line))
}
// Kept reachable: a settled RSS without the parsed lines would measure nothing.
globalThis.parsedSnapshot = lines
process.stdout.write(`parsed ${lines.length} lines\n`)
setInterval(() => {}, 1 << 30)
