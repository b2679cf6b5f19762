// The load baseline: a bare readFile + JSON.parse of a snapshot in its own plain-node process, which then
// holds the document and idles until killed, so its RSS can be read. Typechecked here; bench/run.ts runs it
// as plain JavaScript (plain-script.ts: no tsx, no imports beyond node:), so the floor pays no loader.
import { readFile } from 'node:fs/promises'

declare global {
  // Kept reachable: a settled RSS without the parsed document would measure nothing.
  var parsedSnapshot: unknown
}

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: node bench/.data/bare-parse.mjs SNAPSHOT (bench/run.ts writes it from bench/bare-parse.ts)')
  process.exit(1)
}
const document = JSON.parse(await readFile(file, 'utf8')) as { languages?: Record<string, unknown> }
globalThis.parsedSnapshot = document
process.stdout.write(`parsed ${Object.keys(document.languages ?? {}).length} languages\n`)
setInterval(() => {}, 1 << 30)
