// A schema as the serializer (fast-json-stringify) should see it. It writes an `anyOf` by running ajv on
// the value, branch by branch, with validators compiled the first time a value reaches them: every item a
// load renders was validated twice that way (display_image, story_item_count), and the first /-/status
// answer of a process compiled its validators in one task of 42–47 ms on a service under load
// (docs/decisions/018). A `type` list or an `enum` is
// written after a `typeof` check instead. TypeBox writes "X or null" and a union of string literals as
// `anyOf`, which is what the JSON Schema files, the OpenAPI document and the validators keep; only the
// serializer is given this form.

type Schema = Record<string, unknown>

/** Keywords whose values are data, not schemas: never rewritten. */
const DATA = new Set(['const', 'enum', 'default', 'examples', 'example'])
/** Keywords beside a union that say nothing of its values: kept as they are on the rewritten form. */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'default', 'examples', 'example'])

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
  // Keywords beside the union that constrain its values: fast-json-stringify merges them into each
  // branch, deeply; left to it rather than merged here.
  if (!Array.isArray(anyOf) || !Object.keys(rest).every(key => ANNOTATIONS.has(key))) return schema
  const branches = anyOf as Schema[]
  // X or null, where X names one type: X's keywords with `type: [X, 'null']`, the union's annotations kept.
  const others = branches.filter(branch => !isNull(branch))
  const [other] = others
  if (branches.length === 2 && others.length === 1 && other !== undefined && typeof other.type === 'string' && other.anyOf === undefined) {
    return { ...other, ...rest, type: [other.type, 'null'] }
  }
  // One of a few strings.
  if (branches.every(branch => typeof branch.const === 'string')) {
    return { ...rest, type: 'string', enum: branches.map(branch => branch.const) }
  }
  return schema
}

function isNull (schema: Schema): boolean {
  return schema.type === 'null' && Object.keys(schema).length === 1
}
