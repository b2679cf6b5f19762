// A manifest's text → the manifest, or every reason it is refused; and back. Shared by follower and publisher.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { ManifestImageSchema, ManifestSchema, type Manifest } from '../schemas/manifest.js'
import { schemaProblems } from '../snapshot/load/validation-report.js'
import { ManifestError } from '../errors.js'

const manifestCheck = TypeCompiler.Compile(ManifestSchema)
const imageCheck = TypeCompiler.Compile(ManifestImageSchema)

export function parseManifest (text: string): Manifest {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ManifestError([`not JSON (${(error as Error).message})`])
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ManifestError(['not a manifest: expected a JSON object'])
  }
  if ('image' in value && !imageCheck.Check(value.image)) {
    // Another release's image: the snapshot is parsed.
    const { image: _unread, ...rest } = value
    value = rest
  }
  if (manifestCheck.Check(value)) return value
  const problems: string[] = []
  for (const error of manifestCheck.Errors(value)) {
    if (error.type === ValueErrorType.StringPattern) {
      problems.push(`${pathOf(error.path)}: ${nameProblem(String(error.value), error.path === '/snapshot')}`)
    } else if (error.type === ValueErrorType.ArrayUniqueItems) {
      problems.push('changes: a change file is listed twice')
    }
  }
  for (const { line, repeat } of schemaProblems(manifestCheck.Errors(value))) {
    if (!repeat && !problems.some(problem => problem.startsWith(line.slice(0, line.indexOf(':') + 1)))) {
      problems.push(line)
    }
  }
  throw new ManifestError(problems)
}

/** Read by people: the manifest's own fields first. */
export function manifestText (manifest: Manifest): string {
  const { manifest: kind, version, snapshot, changes, ...rest } = manifest
  return `${JSON.stringify({ manifest: kind, version, snapshot, changes, ...rest }, null, 2)}\n`
}

function pathOf (pointer: string): string {
  const [, field, index] = pointer.split('/')
  return index === undefined ? field ?? '' : `${field ?? ''}[${index}]`
}

function nameProblem (name: string, snapshot: boolean): string {
  const shown = JSON.stringify(name).slice(0, 80)
  if (/[/\\:]/.test(name) || name.startsWith('.')) {
    return `${shown} is not a name beside the manifest (no folders, no "..", no URLs)`
  }
  if (snapshot) {
    return `${shown} is not a snapshot's name (letters, digits, ., _, -, ending in .json, .jsonl or .ndjson)`
  }
  return `${shown} is not a change file's name (letters, digits, ., _, -, ending in .jsonl)`
}
