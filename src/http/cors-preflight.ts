// Tells a CORS preflight from a plain OPTIONS: a per-request CORS delegator cost a third of an uncached answer.
import type { FastifyInstance } from 'fastify'

type Strategy = Parameters<FastifyInstance['addConstraintStrategy']>[0]
type Handler = NonNullable<ReturnType<ReturnType<Strategy['storage']>['get']>>

export const corsPreflightStrategy: Strategy = {
  name: 'corsPreflight',
  mustMatchWhenDerived: false,
  storage () {
    const handlers = new Map<unknown, Handler>()
    return {
      get: value => handlers.get(value) ?? null,
      set: (value, handler) => { handlers.set(value, handler) }
    }
  },
  deriveConstraint: request =>
    request.method === 'OPTIONS' && request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined
      ? 'yes'
      : 'no'
}
