// /-/openapi.json, generated from the routes' schemas, and Swagger UI at /-/docs; registered before those routes.

import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'

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
  await app.register(swaggerUi, { routePrefix: '/-/docs' })
  app.get('/-/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'docs' })
