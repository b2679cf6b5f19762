// Page answers carry CORS headers of their own (cors-policy.ts), every other answer gets @fastify/cors's:
// for each CORS_ORIGIN setting and each kind of Origin they must agree, or a client would see CORS change
// between a page and an error of the same API.
import t from 'tap'
import type { IncomingHttpHeaders } from 'node:http'
import { request } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { allowedOrigin, corsVaries } from '../../src/http/cors-policy.js'
import { buildTestApp, EXPLORE, smallSnapshot } from '../helpers.js'

async function headersOf (app: FastifyInstance, path: string, origin: string | undefined): Promise<IncomingHttpHeaders> {
  const { port } = app.server.address() as { port: number }
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path, headers: origin === undefined ? {} : { origin } }, response => {
      response.resume()
      response.on('end', () => resolve(response.headers))
    })
    req.on('error', reject)
    req.end()
  })
}

const policies: Array<'*' | string[] | false> = ['*', ['https://a.example', 'https://b.example'], false]

for (const policy of policies) {
  t.test(`CORS_ORIGIN=${JSON.stringify(policy)}: a page's CORS headers are @fastify/cors's`, async t => {
    for (const fastPath of [true, false]) {
      const app = await buildTestApp(t, smallSnapshot(), { corsOrigin: policy, fastPath })
      await app.listen({ port: 0, host: '127.0.0.1' })
      for (const origin of [undefined, 'https://a.example', 'https://evil.example']) {
        const label = `fast path ${fastPath ? 'on' : 'off'}, Origin ${origin ?? '(none)'}`
        const page = await headersOf(app, `${EXPLORE}?companies=7`, origin)
        const error = await headersOf(app, '/no/such/path', origin)
        t.equal(page['access-control-allow-origin'], error['access-control-allow-origin'], `Access-Control-Allow-Origin: ${label}`)
        t.equal(page['access-control-allow-origin'], allowedOrigin(policy, origin) ?? undefined, `as cors-policy.ts says: ${label}`)
        const varies = (vary: string | undefined) => (vary ?? '').split(/,\s*/).includes('Origin')
        t.equal(varies(page.vary), varies(error.vary), `Vary: Origin alike: ${label}`)
        t.equal(varies(page.vary), corsVaries(policy), `Vary: Origin only when the origin is checked: ${label}`)
      }
    }
  })
}
