// A schema as fast-json-stringify should see it: "X or null" and string unions as a `type` list or an `enum`, not an
// `anyOf`, which it writes by running ajv on each value (ADR 018).

type Schema = Record<string, unknown>

/** Keywords whose values are data, not schemas: never rewritten. */
const DATA = new Set(['const', 'enum', 'default', 'examples', 'example'])
/** Keywords beside a union that say nothing of its values: kept as they are on the rewritten form. */
const ANNOTATIONS = new Set([
  'title', 'description', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'default', 'examples', 'example'
])

/** `schema` (a JSON Schema: TypeBox's, or a route's response) with its nullable and literal unions rewritten. */
export function forSerializer (schema: object): Schema {
  return rewrite(schema) as Schema
}

function rewrite (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewrite)
  if (typeof value !== 'object' || value === null) return value
  const schema: Schema = {}
  for (const [key, member] of Object.entries(value)) schema[key] = DATA.has(key) ? member : rewrite(member)
  const { anyOf, ...rest } = schema
  // Keywords constraining the union's values: fast-json-stringify merges them into each branch, deeply; left to it.
  if (!Array.isArray(anyOf) || !Object.keys(rest).every(key => ANNOTATIONS.has(key))) return schema
  const branches = anyOf as Schema[]
  // X or null, where X names one type: X's keywords with `type: [X, 'null']`, the union's annotations kept.
  const others = branches.filter(branch => !isNull(branch))
  const [other] = others
  if (branches.length === 2 && others.length === 1 && other !== undefined && typeof other.type === 'string' &&
    other.anyOf === undefined) {
    return { ...other, ...rest, type: [other.type, 'null'] }
  }
  if (branches.every(branch => typeof branch.const === 'string')) {
    return { ...rest, type: 'string', enum: branches.map(branch => branch.const) }
  }
  return schema
}

function isNull (schema: Schema): boolean {
  return schema.type === 'null' && Object.keys(schema).length === 1
}
