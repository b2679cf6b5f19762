import t from 'tap'
import { DOCS_CSP } from '../../src/plugins/docs.js'
import { buildTestApp, smallSnapshot } from '../helpers.js'

t.test('the OpenAPI document is generated from the route schemas', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject('/-/openapi.json')
  t.equal(res.statusCode, 200)
  const doc = JSON.parse(res.body)
  t.equal(doc.openapi, '3.0.3')
  const explore = doc.paths['/{lang}/api/internal/explore/']
  t.ok(explore.get && explore.options, 'GET and OPTIONS are documented')
  t.same(explore.get.parameters.map((p: { name: string }) => p.name).sort(), ['companies', 'format', 'lang', 'limit', 'offset'])
  const page = explore.get.responses['200'].content['application/json'].schema
  t.same(Object.keys(page.properties), ['count', 'next', 'previous', 'results'])
  t.same(Object.keys(page.properties.results.items.properties).length, 16, 'the 16 served fields, companies not among them')
  t.notOk(explore.post, 'the 405 catch-all is not documented')
  for (const path of ['/-/status', '/-/healthz', '/-/readyz']) t.ok(doc.paths[path], path)
  // The status schema's nullable members are type lists (src/schemas/operations.ts): OpenAPI 3.0 says `nullable`.
  const status = doc.paths['/-/status'].get.responses['200'].content['application/json'].schema
  t.match(status.properties.snapshot, { type: 'object', nullable: true, properties: { version: { type: 'string' } } })
  t.match(status.properties.reloads.properties.staleSince, { type: 'string', nullable: true })
})

t.test('Swagger UI is served at /-/docs', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject('/-/docs/')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/html/)
  t.match(res.body, 'swagger-ui')
})

t.test('Swagger UI\'s page, its script and its JSON carry a Content-Security-Policy: this origin only, no inline script', async t => {
  const app = await buildTestApp(t)
  const page = await app.inject('/-/docs/')
  const script = /src="([^"]*swagger-initializer\.js)"/.exec(page.body)?.[1] ?? ''
  for (const url of ['/-/docs', '/-/docs/', `/-/docs/${script.replace(/^\.\//, '')}`, '/-/docs/json']) {
    const res = await app.inject(url)
    t.equal(res.headers['content-security-policy'], DOCS_CSP, `${url} (${res.statusCode})`)
  }
  t.notMatch(DOCS_CSP, /unsafe-inline|unsafe-eval|https?:|\*/, 'nothing from elsewhere, nothing inline')
})

t.test('DOCS=false: neither is served', async t => {
  const app = await buildTestApp(t, smallSnapshot(), { docs: false })
  t.equal((await app.inject('/-/openapi.json')).statusCode, 404)
  t.equal((await app.inject('/-/docs/')).statusCode, 404)
})
