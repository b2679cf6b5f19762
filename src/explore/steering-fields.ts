// Query fields that steer a request's trouble under CHAOS (`__code` is Prism's): no part of its bytes or cache key.
import { parseRequestQuery, TOO_MANY_FIELDS, unquotePlus } from './query-string.js'

const STEERING_FIELDS: ReadonlySet<string> = new Set(['__delay', '__status', '__code'])

/** Keys decoded as Django decodes them. */
export function withoutSteering (target: string): string {
  const mark = target.indexOf('?')
  // No key decodes to one without `__` or an escaped `_`.
  if (mark < 0 || !/__|%5f/i.test(target)) return target
  const kept = target.slice(mark + 1).split('&').filter(field => {
    const eq = field.indexOf('=')
    return !STEERING_FIELDS.has(unquotePlus(eq < 0 ? field : field.slice(0, eq)))
  })
  return kept.length === 0 ? target.slice(0, mark) : `${target.slice(0, mark)}?${kept.join('&')}`
}

/** The last value of each (QueryDict.get). Never throws. */
export function steeringOf (target: string): Record<string, string | undefined> {
  const steering: Record<string, string | undefined> = {}
  const mark = target.indexOf('?')
  if (mark < 0 || !/__|%5f/i.test(target)) return steering
  const query = parseRequestQuery(target.slice(mark + 1))
  if (query === TOO_MANY_FIELDS) return steering
  for (const field of STEERING_FIELDS) steering[field] = query[field]?.at(-1)
  return steering
}
