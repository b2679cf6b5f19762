// The one matcher of the explore URL, as Django's URLconf matches it (decoded), with or without its slash.
import { LANGUAGE } from '../schemas/snapshot.js'

/** `matchExplorePath` has the last word. */
export const EXPLORE_ROUTE = '/:lang/api/internal/explore/'

interface ExploreTarget {
  lang: string
  /** False: APPEND_SLASH redirects it. */
  slash: boolean
  /** Decoded. */
  path: string
  /** Raw. */
  query: string
}

const EXPLORE = /^\/([^/]+)\/api\/internal\/explore(\/?)$/
// RFC 9112 §3.2.2: a target in absolute form (`http://host/path`) is routed by its path, as Fastify's router does.
const ABSOLUTE_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/

export function matchExplorePath (target: string): ExploreTarget | null {
  const mark = target.indexOf('?')
  let raw = mark < 0 ? target : target.slice(0, mark)
  if (raw.charCodeAt(0) !== 0x2f) raw = raw.replace(ABSOLUTE_FORM, '')
  // `explore%2F` is `explore/`; a path that cannot be decoded matches nothing.
  const path = raw.includes('%') ? decodePath(raw) : raw
  if (path === null) return null
  const match = EXPLORE.exec(path)
  if (match === null || !LANGUAGE.test(match[1] as string)) return null
  return { lang: match[1] as string, slash: match[2] === '/', path, query: mark < 0 ? '' : target.slice(mark + 1) }
}

function decodePath (path: string): string | null {
  try {
    return decodeURIComponent(path)
  } catch {
    return null
  }
}
