// A bench script kept in TypeScript (typechecked with the rest) but run by plain `node`: its types stripped
// by TypeScript's own transpiler into a .mjs beside the bench's data. For the bare-parse floors, whose time
// and memory must be Node's alone: under tsx, its loader would count in the floor the service is held to.
import { readFile, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
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
