// /-/openapi.json, generated from the routes' schemas, and Swagger UI at /-/docs; registered before those routes.

import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'

// Swagger UI's files only, and the API of this origin for "Try it out": no inline script, nothing from elsewhere
// (not even the validator badge, which would send the document's URL to validator.swagger.io).
// The one inline style it writes is its logo's (an SVG's <style>, swagger-ui-standalone-preset.js): allowed by digest.
const LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' 'sha256-${createHash('sha256').update(LOGO_STYLE).digest('base64')}'`,
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join('; ')

export default fp(async function docsPlugin (app) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Explore replica',
        description:
          'Articles and stories linked to a company, newest first: a read replica of the explore listing API.',
        version: '1'
      }
    }
  })
  await app.register(swaggerUi, { routePrefix: '/-/docs', staticCSP: DOCS_CSP })
  app.get('/-/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'docs' })
