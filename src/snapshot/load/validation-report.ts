// Schema errors as lines an editor reads, one per broken rule, capped so a wholly wrong file does not flood the log.
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { LANGUAGE_PATTERN } from '../../schemas/snapshot.js'

export const DEFAULT_PROBLEM_CAP = 50

export const NOT_A_LANGUAGE = `is not a language segment (expected ${LANGUAGE_PATTERN}, e.g. en or pt-br)`

/** `/languages/en/41/backdate` → `languages.en[41].backdate`. */
export function jsonPath (pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (/^(0|[1-9]\d*)$/.test(part)) out += `[${part}]`
    // A key is the file's: one of 300 MB was quoted whole into the status. Cut as values are.
    else if (part.length <= 60 && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += out === '' ? part : `.${part}`
    else out += `[${preview(part)}]`
  }
  return out === '' ? '(top level)' : out
}

export function escapePointer (token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

export function preview (value: unknown): string {
  if (value === undefined) return 'nothing'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    // JSON.parse reads deeper than JSON.stringify can write back.
    return Array.isArray(value) ? '[…]' : '{…}'
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

function kindOf (schema: Record<string, unknown>): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Array<Record<string, unknown>>).map(kindOf).join(' or ')
  if (schema.type === 'object' && typeof schema.title === 'string') return `${schema.title} object`
  if (schema.type === 'null') return 'null'
  if (typeof schema.type === 'string') return /^[aeiou]/.test(schema.type) ? `an ${schema.type}` : `a ${schema.type}`
  return 'a value'
}

/** JSON.parse rounds integers past 2^53, so quoting one would misquote the file. */
function exact (value: unknown): boolean {
  return typeof value !== 'number' || Math.abs(value) <= Number.MAX_SAFE_INTEGER
}

function bound (limit: unknown): string {
  if (limit === Number.MAX_SAFE_INTEGER) return `${limit} (2^53 - 1): JSON numbers past it lose precision`
  if (limit === -Number.MAX_SAFE_INTEGER) return `${limit} (-(2^53 - 1)): JSON numbers past it lose precision`
  return String(limit)
}

function describe (error: ValueError): string {
  const schema = error.schema as unknown as Record<string, unknown>
  const got = preview(error.value)
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required'
    case ValueErrorType.StringFormat:
      return schema.format === 'date'
        ? `${got} is not a calendar date (YYYY-MM-DD)`
        : `${got} is not an ISO-8601 timestamp`
    case ValueErrorType.StringPattern:
      return `${got} does not match ${String(schema.pattern)}`
    case ValueErrorType.StringMaxLength:
      return `${got} is ${(error.value as string).length} characters long; at most ${String(schema.maxLength)}`
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return exact(error.value)
        ? `${got} is below ${String(schema.minimum)}`
        : `must be ${kindOf(schema)} of at least ${bound(schema.minimum)}`
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return exact(error.value)
        ? `${got} is above ${String(schema.maximum)}`
        : `must be ${kindOf(schema)} of at most ${bound(schema.maximum)}`
    case ValueErrorType.Literal:
      return `${got} is not ${JSON.stringify(schema.const)}`
    case ValueErrorType.ObjectMinProperties:
      return 'must name at least one language'
    case ValueErrorType.ObjectAdditionalProperties:
      // Only `languages` forbids extra keys.
      return NOT_A_LANGUAGE
    default:
      return `expected ${kindOf(schema)}, got ${got}`
  }
}

function jsonType (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/** A value of exactly one union branch's type is told why that branch failed. */
function * flatten (errors: Iterable<ValueError>): Generator<ValueError> {
  for (const error of errors) {
    if (error.type === ValueErrorType.Union) {
      const branches = ((error.schema as { anyOf?: Array<{ type?: string }> }).anyOf ?? [])
      const type = jsonType(error.value)
      const matching = branches.flatMap((branch, i) => branch.type === type ? [i] : [])
      if (matching.length === 1 && error.errors[matching[0] as number] !== undefined) {
        yield * flatten(error.errors[matching[0] as number] as Iterable<ValueError>)
        continue
      }
    }
    yield error
  }
}

/** A `repeat` path is skipped but counted towards a full report; `within`: the pointer inside the value checked. */
export function * schemaProblems (
  errors: Iterable<ValueError>, pointer = ''
): Generator<{ path: string, line: string, repeat: boolean, within: string }> {
  const seen = new Set<string>()
  for (const error of flatten(errors)) {
    const path = jsonPath(`${pointer}${error.path}`)
    const repeat = seen.has(path)
    seen.add(path)
    yield { path, line: `${path}: ${describe(error)}`, repeat, within: error.path }
  }
}

/** Characters of one problem: a path, a name and a value cut to 60 each fit many times over. */
const MAX_LINE = 1000

export class ValidationReport {
  readonly problems: string[] = []
  truncated = false
  private readonly seenPaths = new Set<string>()

  constructor (readonly cap: number) {}

  get full (): boolean {
    return this.problems.length >= this.cap
  }

  add (line: string): void {
    if (this.full) {
      this.truncated = true
      return
    }
    // Whatever else of a file's bytes reaches a line: the status, the console and the log stay small.
    this.problems.push(line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 3)}...` : line)
  }

  /** `where`: e.g. `name:line: `. */
  addSchemaErrors (errors: Iterable<ValueError>, where: string): void {
    for (const { path, line, repeat } of schemaProblems(errors)) {
      if (this.full) {
        this.truncated = true
        return
      }
      if (repeat || this.seenPaths.has(`${where}${path}`)) continue
      this.seenPaths.add(`${where}${path}`)
      this.add(`${where}${line}`)
    }
  }

  lines (): string[] {
    return this.truncated
      ? [
          ...this.problems,
          `(stopped after ${this.cap} ${this.cap === 1 ? 'problem' : 'problems'}; fix these and check again)`
        ]
      : [...this.problems]
  }
}
