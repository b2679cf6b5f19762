// Turns schema errors into the lines an editor reads (`languages.en[41].backdate: "2024-02-30" is not a
// calendar date`): one line per broken rule, capped so a wholly wrong file does not flood the log.
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { LANGUAGE_PATTERN } from '../../schemas/snapshot.js'

export const DEFAULT_PROBLEM_CAP = 50

/** What is wrong with a key of `languages` that is no language segment. */
export const NOT_A_LANGUAGE = `is not a language segment (expected ${LANGUAGE_PATTERN}, e.g. en or pt-br)`

/** `/languages/en/41/backdate` → `languages.en[41].backdate` (JSON Pointer escapes undone). */
export function jsonPath (pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (/^(0|[1-9]\d*)$/.test(part)) out += `[${part}]`
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += out === '' ? part : `.${part}`
    else out += `[${JSON.stringify(part)}]`
  }
  return out === '' ? '(top level)' : out
}

/** A JSON Pointer token: `~` and `/` escaped. */
export function escapePointer (token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** A short, safe rendering of an offending value. */
export function preview (value: unknown): string {
  if (value === undefined) return 'nothing'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    // Nested deeper than the stack allows (JSON.parse reads what JSON.stringify cannot write back).
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

/** Whether a number is the file's own: JSON.parse rounds integers past 2^53, so quoting one would misquote. */
function exact (value: unknown): boolean {
  return typeof value !== 'number' || Math.abs(value) <= Number.MAX_SAFE_INTEGER
}

/** A limit as a report names it: the safe integers' own with why a number past it is refused. */
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
      // Only `languages` forbids extra keys: one that fails the language-segment pattern.
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

/** The deepest useful errors: a value of exactly one union branch's type is told why that branch failed. */
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

/**
 * Schema errors as report lines (`path: what is wrong`), in order, lazily. A path already named comes as a
 * `repeat`: skipped, but counted towards a full report. `pointer`: where the value is (`/languages/en/41`);
 * `within`: the offending value's JSON Pointer inside the value checked (`/backdate`), to find its place.
 */
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
    this.problems.push(line)
  }

  /** Adds schema errors, one line a path; `where` starts each line (`name:line: `). */
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
