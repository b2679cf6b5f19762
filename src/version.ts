// The package's version, read once from its package.json: one directory up from src/ (tsx) and from dist/
// alike, and npm packs package.json whatever `files` says.
import { readFileSync } from 'node:fs'

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version
