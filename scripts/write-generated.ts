// Writes generated files (path from the repository's root → contents), or with --check exits 1 when a
// committed one is stale: the one way `npm run schemas` and `npm run docs:reference` write.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

export async function writeGenerated (files: Record<string, string>, command: string): Promise<void> {
  const check = process.argv.includes('--check')
  const root = join(import.meta.dirname, '..')
  let stale = 0
  for (const [path, contents] of Object.entries(files)) {
    const file = join(root, path)
    const current = await readFile(file, 'utf8').catch(() => null)
    if (current === contents) continue
    if (check) {
      stale++
      process.stderr.write(`${path} is stale: run ${command}\n`)
    } else {
      await mkdir(dirname(file), { recursive: true })
      await writeFile(file, contents)
      process.stdout.write(`wrote ${path}\n`)
    }
  }
  process.exitCode = stale > 0 ? 1 : 0
}
