// src/schemas: the formats the schemas check, the JSON Schema files written from them, and the form the serializer compiles.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import fastJson from 'fast-json-stringify'
import { loadConfig } from '../../src/config.js'
import { serializerFactory, serverOptions } from '../../src/http/server-options.js'
import { ContentItemSchema } from '../../src/schemas/content-item.js'
import { ExplorePageSchema } from '../../src/schemas/explore-response.js'
import { isCalendarDate, isDateTime } from '../../src/schemas/formats.js'
import { jsonSchemaFiles } from '../../src/schemas/json-schema-files.js'
import { HealthSchema, ReadinessSchema, StatusSchema } from '../../src/schemas/operations.js'
import { forSerializer } from '../../src/schemas/serializer-schema.js'
import { buildTestApp, makeItem } from '../helpers.js'

// src/schemas/formats.ts: a date or a timestamp names a day and a time that exist.
t.test('a calendar date must name a day that exists', async t => {
  for (const good of ['2024-02-29', '2000-02-29', '2023-12-31', '0001-01-01', '9999-12-31', '2024-04-30']) {
    t.ok(isCalendarDate(good), good)
  }
  for (const bad of ['2023-02-29', '1900-02-29', '2024-02-30', '2024-04-31', '2024-13-01', '2024-00-10',
    '2024-01-00', '0000-01-01', '2024-1-01', '24-01-01', '2024-01-01T00:00:00Z', ' 2024-01-01', '']) {
    t.notOk(isCalendarDate(bad), bad)
  }
})

t.test('a timestamp is ISO-8601 with a real date and time', async t => {
  for (const good of ['2026-11-20T09:30:00Z', '2026-11-20T09:30:00.123+01:00', '2026-11-20 09:30', '2026-11-20T23:59:60Z', '2026-11-20T09:30:00-0530']) {
    t.ok(isDateTime(good), good)
  }
  for (const bad of ['2026-11-20', '2026-02-30T09:30:00Z', '2026-11-20T24:00:00Z', '2026-11-20T09:61:00Z', 'yesterday', '2026-11-20T09:30:00+25:00']) {
    t.notOk(isDateTime(bad), bad)
  }
})

// src/schemas/json-schema-files.ts: schemas/*.json, committed, are what TypeBox's schemas generate, as plain JSON Schema.
t.test('the committed JSON Schema files are the ones generated from TypeBox', async t => {
  for (const [name, contents] of Object.entries(jsonSchemaFiles())) {
    const committed = await readFile(join(import.meta.dirname, '..', '..', 'schemas', name), 'utf8')
    t.equal(committed, contents, `schemas/${name} is up to date (npm run schemas regenerates it)`)
  }
})

t.test('the generated files are plain JSON Schema: no TypeBox internals', async t => {
  for (const contents of Object.values(jsonSchemaFiles())) {
    const schema = JSON.parse(contents)
    t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema')
    t.notMatch(contents, /TypeBox|Symbol/)
  }
})

// src/schemas/serializer-schema.ts: the schemas in a form fast-json-stringify serializes without a validator, byte for byte the same.
// What fast-json-stringify answers with a validator (ajv) that it compiles on first use.
const COMBINATORS = ['anyOf', 'oneOf', 'allOf', 'not', 'if']

function combinatorsIn (schema: unknown, at: string, found: string[] = []): string[] {
  if (typeof schema !== 'object' || schema === null) return found
  for (const [key, value] of Object.entries(schema)) {
    if (COMBINATORS.includes(key)) found.push(`${at}.${key}`)
    combinatorsIn(value, `${at}.${key}`, found)
  }
  return found
}

const SCHEMAS = { ContentItemSchema, ExplorePageSchema, StatusSchema, HealthSchema, ReadinessSchema }

t.test('every schema the service serializes with needs no validator in the serializer\'s form', async t => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    t.ok(combinatorsIn(schema, name).length > 0 || name === 'HealthSchema', `${name} as written has unions`)
    t.same(combinatorsIn(forSerializer(schema), name), [], name)
  }
})

t.test('the serializer\'s form writes the same bytes as the schema as written', async t => {
  const image = { url: 'https://img.example/é "1".jpg', width: 640, height: 480 }
  const items = [
    makeItem(1, '2024-01-02', [7]),
    makeItem(2, '2024-01-02', [7], { display_image: image, story_item_count: 3, extra: 'dropped' }),
    makeItem(3, '2024-01-02', [7], { story_item_count: 0, series: { any: ['json'] } })
  ]
  const asWritten = fastJson(ContentItemSchema as object)
  const rewritten = fastJson(forSerializer(ContentItemSchema))
  for (const item of items) t.equal(rewritten(item), asWritten(item), `item ${item.pk}`)

  const statuses = [
    { version: '1.2.3', node: 'v20.19.4', path: 'p', snapshot: null, reloads: { succeeded: 0, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null, refusals: { invalid: 0, too_big: 0 }, recentFailures: [] }, memory: null, source: null, servingThreads: null, pin: null, newest: null, trouble: null },
    {
      version: '1.2.3',
      node: 'v20.19.4',
      path: 'p',
      snapshot: { version: 'v', generatedAt: null, loadedAt: 'l', items: { en: 3 } },
      reloads: { succeeded: 1, failed: 2, failedInARow: 1, lastFailure: { at: 'a', problems: ['x'] }, staleSince: 's', refusals: { invalid: 1, too_big: 1 }, recentFailures: [{ at: 'a', file: 'f', reason: 'too_big', problems: ['x'] }, { at: 'a', file: 'f', reason: 'invalid', problems: ['y'] }] },
      memory: { budget: 1024, budgetSource: 'cgroup v1', lastTooBig: { at: 'a', file: 'f', neededBytes: 2048, freeBytes: -5, budgetBytes: 1024 } },
      source: { url: 'u', etag: null, lastModified: 'm', lastChecked: null, lastChanged: 'c', lastError: { at: 'a', message: 'm' }, checks: 2, errors: 1 },
      servingThreads: [{ id: 0, threadId: 2, version: null, since: 'g', restarts: 0, lettingGo: ['v0'] }],
      pin: { version: 'v', pinnedAt: 'p', from: 'w' },
      newest: { noticedAt: 'n', source: 's', etag: null },
      trouble: { delay: '100-400', failRate: 0.2, failStatus: 503, fault: 'dribble', faultRate: 1, chaos: true, seed: 7, replay: 'order' }
    }
  ]
  for (const status of statuses) t.equal(fastJson(forSerializer(StatusSchema))(status), fastJson(StatusSchema as object)(status))
  for (const status of ['ready', 'unready']) {
    t.equal(fastJson(forSerializer(ReadinessSchema))({ status }), fastJson(ReadinessSchema as object)({ status }))
  }
})

t.test('X or null keeps the union\'s description; other unions are left as they are', async t => {
  t.same(forSerializer({ anyOf: [{ type: 'string' }, { type: 'null' }], description: 'd' }), { type: ['string', 'null'], description: 'd' })
  t.same(forSerializer({ anyOf: [{ const: 'a', type: 'string' }, { const: 'b', type: 'string' }] }), { type: 'string', enum: ['a', 'b'] })
  const mixed = { anyOf: [{ type: 'string' }, { type: 'integer' }] }
  t.same(forSerializer(mixed), mixed)
  // Keywords beside the union that constrain it are fast-json-stringify's to merge, deeply.
  const constrained = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'null' }], properties: { b: { type: 'string' } } }
  t.same(forSerializer(constrained), constrained)
  // Data is never read as a schema.
  const data = { type: 'object', default: { anyOf: [{ type: 'string' }, { type: 'null' }] }, const: { anyOf: [] } }
  t.same(forSerializer(data), data)
})

t.test('the server\'s serializer factory compiles every answer in that form: no validator in the code it makes', async t => {
  const options = serverOptions(loadConfig({ overrides: { logLevel: 'silent' } }))
  t.equal(options.schemaController?.compilersFactory?.buildSerializer, serializerFactory, 'the server\'s options use it')
  // fast-json-stringify's standalone mode gives the code it would run (serializerOpts pass through): a
  // validator shows in it.
  const code = (schema: object): string => serializerFactory(undefined, { mode: 'standalone' })({ schema, method: 'GET', url: '/', httpStatus: '200' }) as unknown as string
  for (const [name, schema] of Object.entries(SCHEMAS)) t.notMatch(code(schema), /getSchemaValidator/, name)
  t.match(fastJson(StatusSchema as object, { mode: 'standalone' }), /getSchemaValidator/, 'the status schema as written needs one')
  // Shared schemas (app.addSchema) pass through, in the same form.
  const shared = { $id: 'shared', anyOf: [{ type: 'string' }, { type: 'null' }] }
  const serialize = serializerFactory({ shared }, {})({ schema: { type: 'object', properties: { a: { $ref: 'shared#' } } }, method: 'GET', url: '/', httpStatus: '200' })
  t.equal(serialize({ a: null }), '{"a":null}')
  t.equal(serialize({ a: 'x' }), '{"a":"x"}')
})

t.test('the operational routes answer through it: a status answer with members null and set', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject('/-/status')
  t.equal(res.statusCode, 200)
  t.match(JSON.parse(res.body), { snapshot: { version: String }, reloads: { lastFailure: null, staleSince: null }, source: null, servingThreads: null })
  t.same(JSON.parse((await app.inject('/-/readyz')).body), { status: 'ready' })
})
