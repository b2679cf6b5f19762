// The load baseline: a bare readFile + JSON.parse of a snapshot in its own plain-node process (no tsx, no
// imports beyond node:), which then holds the document and idles until killed, so its RSS can be read.
import { readFile } from 'node:fs/promises'

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: node bench/bare-parse.mjs SNAPSHOT')
  process.exit(1)
}
const document = JSON.parse(await readFile(file, 'utf8'))
// Kept reachable: a settled RSS without the parsed document would measure nothing.
globalThis.parsedSnapshot = document
process.stdout.write(`parsed ${Object.keys(document.languages ?? {}).length} languages\n`)
setInterval(() => {}, 1 << 30)
