// One option of the configuration as declared once: its schema says the rule (--help, the reference, every
// error) and parses its text, unless the declaration brings a parser of its own for what no schema says.
import { KindGuard, Type, type Static, type TSchema } from '@sinclair/typebox'

export const BOOLEAN_RULE = 'true or false (also 1/0, yes/no, on/off)'

/** What an option's `auto` may depend on. */
export interface AutoContext {
  /** Whether the log goes to a terminal. */
  tty: boolean
  /** The options declared before this one. */
  config: Readonly<Record<string, unknown>>
}

export interface OptionDeclaration<S extends TSchema> {
  env: string
  /** The value's type and bounds: the option's part of ConfigSchema. */
  schema: S
  /** Absent: unset (null). */
  default?: string
  /** Where the real default depends on the machine. */
  shown?: string
  description: string
  /** Said by --help, the reference and every error about the option. Absent: said by the schema. */
  rule?: string
  /** Said after the rule in an error, in parentheses. */
  note?: string
  /** Never repeated in a message. */
  secret?: boolean
  /** A refused value as a message repeats it. */
  shownValue?: (text: string) => string
  /** The value `auto` stands for. */
  auto?: (context: AutoContext) => Static<S>
  /** For what a schema cannot say; throws a message without the option name. `bySchema`: the schema's parser. */
  parse?: (text: string, bySchema: (text: string) => Static<S>) => Static<S>
}

export interface Option<S extends TSchema = TSchema> extends Omit<OptionDeclaration<S>, 'rule' | 'parse'> {
  /** `--` and `env` in kebab case. */
  flag: string
  rule: string
  /** Throws a message without the option name (added by the caller). */
  parse: (text: string) => Static<S>
}

export function nonEmpty (text: string): string {
  if (text.trim() === '') throw new Error('must not be empty')
  return text.trim()
}

/** The schema without its null, or undefined when it takes no null. */
function nonNull (schema: TSchema): TSchema | undefined {
  if (!KindGuard.IsUnion(schema) || !schema.anyOf.some(KindGuard.IsNull)) return undefined
  const values = schema.anyOf.filter(member => !KindGuard.IsNull(member))
  return values.length === 1 ? values[0] : Type.Union(values)
}

function choices (schema: TSchema): Array<string | number> | undefined {
  if (!KindGuard.IsUnion(schema) || !schema.anyOf.every(KindGuard.IsLiteral)) return undefined
  return schema.anyOf.map(literal => literal.const as string | number)
}

function bounds (schema: TSchema & { minimum?: number, maximum?: number }): [number, number] {
  if (schema.minimum === undefined || schema.maximum === undefined) {
    throw new TypeError('a number declares its minimum and maximum: its rule names them')
  }
  return [schema.minimum, schema.maximum]
}

function ruleOf (schema: TSchema): string | undefined {
  const inner = nonNull(schema)
  if (inner !== undefined) return ruleOf(inner)
  const values = choices(schema)
  // A short list reads as a sentence (reset, truncate or dribble), a long one as a list.
  if (values !== undefined) {
    return values.length > 3 ? `one of ${values.join(', ')}` : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`
  }
  if (KindGuard.IsInteger(schema)) return `a whole number from ${bounds(schema).join(' to ')}`
  if (KindGuard.IsNumber(schema)) return `a number from ${bounds(schema).join(' to ')}`
  if (KindGuard.IsBoolean(schema)) return BOOLEAN_RULE
  return undefined
}

/** The parser a schema implies; every refusal is `mustBe`, but an empty text's. */
function parserOf (schema: TSchema, mustBe: string): ((text: string) => unknown) | undefined {
  const refuse = (): never => { throw new Error(mustBe) }
  const inner = nonNull(schema)
  if (inner !== undefined) {
    const parse = parserOf(inner, mustBe)
    return parse && (text => text.trim() === '' ? null : parse(text))
  }
  const values = choices(schema)
  if (values !== undefined) {
    return text => {
      const value = text.trim().toLowerCase()
      return values.find(choice => typeof choice === 'number' ? Number(value) === choice : value === choice) ?? refuse()
    }
  }
  if (KindGuard.IsInteger(schema) || KindGuard.IsNumber(schema)) {
    const [min, max] = bounds(schema)
    const digits = KindGuard.IsInteger(schema) ? /^[0-9]+$/ : /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/
    return text => {
      const value = text.trim()
      return digits.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : refuse()
    }
  }
  if (KindGuard.IsBoolean(schema)) {
    return text => {
      const value = text.trim().toLowerCase()
      if (['1', 'true', 'yes', 'on'].includes(value)) return true
      return ['0', 'false', 'no', 'off', ''].includes(value) ? false : refuse()
    }
  }
  return KindGuard.IsString(schema) ? nonEmpty : undefined
}

/** Throws, naming the variable, when the declaration cannot say its rule or parse its text. */
export function declareOption<S extends TSchema> (declaration: OptionDeclaration<S>): Option<S> {
  try {
    return completed(declaration)
  } catch (error) {
    throw new TypeError(`${declaration.env}: ${(error as Error).message}`)
  }
}

function completed<S extends TSchema> (declaration: OptionDeclaration<S>): Option<S> {
  const { env, schema, auto, parse, note } = declaration
  const said = ruleOf(schema)
  const rule = declaration.rule ?? (said !== undefined && auto !== undefined ? `${said}, or auto` : said)
  if (rule === undefined) throw new TypeError('its schema says no rule: declare one')
  const unparsed = (): never => { throw new TypeError('its schema parses no text: declare a parser') }
  const bySchema = parserOf(schema, `must be ${rule}${note === undefined ? '' : ` (${note})`}`)
  if (bySchema === undefined && parse === undefined) unparsed()
  const schemaParse = (bySchema ?? unparsed) as (text: string) => Static<S>
  return {
    ...declaration,
    flag: `--${env.toLowerCase().replaceAll('_', '-')}`,
    rule,
    parse: parse === undefined ? schemaParse : text => parse(text, schemaParse)
  }
}
