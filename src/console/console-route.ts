// The operator's console (CONSOLE): GET /-/ rendered from /-/status's answer, and its own script and stylesheet; the
// Content-Security-Policy lets the page load nothing else.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { notModified } from '../explore/conditional-get.js'
import { currentStatus } from '../routes/status-route.js'
import { previewQuery, renderConsolePage } from './console-page.js'
import { CONSOLE_SCRIPT } from './console-script.js'
import { CONSOLE_STYLE } from './console-style.js'

// No inline script or style anywhere: the page's own files only. Images come from wherever the
// snapshot's display_image points; the preview asks this origin's API (connect-src).
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: http: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join('; ')

interface Asset {
  path: string
  type: string
  body: string
  /** A digest of the body: the page links `path?v=version`, a URL that always means these bytes. */
  version: string
}

function asset (path: string, type: string, body: string): Asset {
  return { path, type, body, version: createHash('sha256').update(body).digest('base64url').slice(0, 16) }
}

const SCRIPT = asset('/-/console.js', 'text/javascript; charset=utf-8', CONSOLE_SCRIPT)
const STYLE = asset('/-/console.css', 'text/css; charset=utf-8', CONSOLE_STYLE)
const versioned = ({ path, version }: Asset): string => `${path}?v=${version}`

/** As the URL carries it: the app's query parser is the explore view's. */
function search (request: FastifyRequest): string {
  const at = request.url.indexOf('?')
  return at < 0 ? '' : request.url.slice(at + 1)
}

function secure (reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
}

export default async function consolePlugin (app: FastifyInstance): Promise<void> {
  // GET only (Fastify adds HEAD): any other method is the not-found answer /-/status gives it too.
  app.get('/-/', { schema: { hide: true } }, async (request, reply) => {
    let versions = null
    try {
      versions = app.snapshotVersions.state()
    } catch {}
    const page = renderConsolePage(currentStatus(app), {
      versions,
      assets: { script: versioned(SCRIPT), style: versioned(STYLE) },
      // Asked of the router, not of the config: DOCS and METRICS decide whether these routes exist.
      links: {
        docs: app.hasRoute({ method: 'GET', url: '/-/docs' }),
        metrics: app.hasRoute({ method: 'GET', url: '/-/metrics' })
      },
      preview: previewQuery(search(request)),
      journal: app.requestJournal !== null,
      now: new Date()
    })
    // Live facts: never kept by a browser or a proxy.
    return secure(reply).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page)
  })

  for (const file of [SCRIPT, STYLE]) {
    const etag = `"${file.version}"`
    app.get(file.path, { schema: { hide: true } }, async (request, reply) => {
      secure(reply).header('etag', etag).type(file.type)
      // The versioned URL the page links may be kept for a year: new bytes get a new URL. Any other URL
      // (no version, or an old page's) is revalidated, so it never pins bytes it no longer means.
      const current = new URLSearchParams(search(request)).get('v') === file.version
      reply.header('cache-control', current ? 'public, max-age=31536000, immutable' : 'no-cache')
      if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send()
      return reply.send(file.body)
    })
  }
}
