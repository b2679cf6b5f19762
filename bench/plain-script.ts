// A bench script kept in TypeScript (typechecked with the rest) but run by plain `node`: its types stripped
// by TypeScript's own transpiler into a .mjs beside the bench's data. For the bare-parse floors, whose time
// and memory must be Node's alone: under tsx, its loader would count in the floor the service is held to.
// And for modules loaded into the service with `--import` (the gap recorder): under `--import tsx`, the
// parse pool's threads fail to load a .ts module ("Unknown file extension"), and the service then parses on
// its main thread, so a reload measured that way is not the service's. From the command line:
//   npx tsx bench/plain-script.ts bench/experiments/gap-recorder.ts   (prints bench/.data/gap-recorder.mjs)
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** Writes `source` (a .ts file importing only node: modules) as `dir/NAME.mjs` and returns that path. */
export async function plainScript (source: string, dir: string): Promise<string> {
  const { outputText, diagnostics } = ts.transpileModule(await readFile(source, 'utf8'), {
    fileName: source,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true }
  })
  if (diagnostics !== undefined && diagnostics.length > 0) {
    throw new Error(`${source}: ${diagnostics.map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`)
  }
  const out = join(dir, `${basename(source, '.ts')}.mjs`)
  await writeFile(out, outputText)
  return out
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const source = process.argv[2]
  if (source === undefined) {
    console.error('usage: npx tsx bench/plain-script.ts SOURCE.ts   (writes bench/.data/SOURCE.mjs and prints its path)')
    process.exit(2)
  }
  const dir = join(dirname(fileURLToPath(import.meta.url)), '.data')
  await mkdir(dir, { recursive: true })
  console.log(relative(process.cwd(), await plainScript(source, dir)))
}
