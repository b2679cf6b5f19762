// The package's version: package.json is one directory up from src/ and dist/, and always packed.
import { readFileSync } from 'node:fs'

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version
