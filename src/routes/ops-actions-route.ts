// The operator's versions: GET /-/versions, and POST /-/rollback, /-/pin and /-/unpin, which exist only with OPS_PORT
// (else 404, like any unknown path) and need `Authorization: Bearer <OPS_TOKEN>` (403 with no token set, else 401).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { opsActionsOff, opsNotAuthenticated, opsTokenInvalid, pinBodyInvalid } from '../errors.js'
import { PinRequestSchema, VersionsSchema, type PinRequest, type Versions } from '../schemas/versions.js'
import type { OperatorAction } from '../snapshot/versions/served-versions.js'

interface OpsActionsOptions {
  /** null: the actions answer 403. */
  token: string | null
}

/** The socket's peer: TRUST_PROXY's X-Forwarded-For is anyone's to write, and no proxy fronts OPS_PORT. */
function clientOf (request: FastifyRequest): string {
  return request.socket.remoteAddress ?? 'unknown'
}

/** A digest of each side, so that tokens of different lengths compare in constant time too. */
function digest (text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

export async function opsActionsRoutes (app: FastifyInstance, { token }: OpsActionsOptions): Promise<void> {
  const versions = app.snapshotVersions

  app.get('/-/versions', {
    schema: { summary: 'The served version, the kept ones and the pin', response: { 200: VersionsSchema } }
  }, async () => versions.state())

  if (app.ops === null) {
    if (token !== null) {
      app.log.warn(
        'OPS_TOKEN is set but OPS_PORT is not: the operator\'s actions exist only on the operator\'s listener, so there are none'
      )
    }
    return
  }

  const expected = token === null ? null : digest(token)
  await app.register(async function opsActions (scope) {
    // Only /-/pin reads a body: JSON whatever the Content-Type (curl -d says form), 4 KiB at most, else no body (400).
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string))
      } catch {
        done(null, null)
      }
    })
    scope.addHook('onRequest', async (request, reply) => {
      if (expected === null) throw opsActionsOff()
      const given = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1]
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        reply.header('www-authenticate', 'Bearer')
        request.log.warn(
          { client: clientOf(request), action: request.url, token: given === undefined ? 'missing' : 'wrong' },
          'operator action refused: no valid token'
        )
        throw given === undefined ? opsNotAuthenticated() : opsTokenInvalid()
      }
    })

    const act = async (request: FastifyRequest, action: OperatorAction, version?: string): Promise<Versions> => {
      try {
        const { state, from, to } = await versions.carryOut(action, version)
        request.log.info(
          { client: clientOf(request), action, from, to },
          `operator action: ${action} (${from ?? 'nothing'} → ${to ?? 'nothing'})`
        )
        return state
      } catch (error) {
        request.log.warn(
          { client: clientOf(request), action, version, problem: (error as Error).message },
          `operator action failed: ${action}`
        )
        throw error
      }
    }

    const response = { 200: VersionsSchema }
    scope.post('/-/rollback', {
      schema: { summary: 'Serve the kept version served before this one, and pin it', response }
    }, async request => await act(request, 'rollback'))
    scope.post<{ Body: PinRequest }>('/-/pin', {
      schema: { summary: 'Serve a kept version and pin it', body: PinRequestSchema, response },
      attachValidation: true
    }, async request => {
      if (request.validationError !== undefined) throw pinBodyInvalid()
      return await act(request, 'pin', request.body.version)
    })
    scope.post('/-/unpin', {
      schema: { summary: 'Follow the source again: its newest file or object is loaded at once', response }
    }, async request => await act(request, 'unpin'))
  })
}
