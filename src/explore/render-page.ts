// Writes the page envelope around items that were serialized at load, as DRF's JSONRenderer would:
// compact, non-ASCII as is, U+2028/U+2029 escaped; indented when the client asked for `indent=N`.

const CLOSE = Buffer.from(']}')

export interface PageEnvelope {
  count: number
  next: string | null
  previous: string | null
  /** The items as JSON array contents, already in their served form. */
  items: Buffer
}

function link (url: string | null): string {
  // Links are percent-encoded ASCII (host checked, query re-encoded): JSON.stringify only adds quotes.
  return url === null ? 'null' : JSON.stringify(url)
}

export function renderPage (page: PageEnvelope, indent: number | null): Buffer {
  const head = Buffer.from(`{"count":${page.count},"next":${link(page.next)},"previous":${link(page.previous)},"results":[`)
  const compact = Buffer.concat([head, page.items, CLOSE], head.length + page.items.length + CLOSE.length)
  return indent === null ? compact : renderJson(JSON.parse(compact.toString('utf8')), indent)
}

/**
 * Any JSON body as DRF writes it. Python's `json.dumps(indent=N)` and `JSON.stringify(value, null, N)`
 * lay out the same way (`": "` after keys, `[]` and `{}` for empty containers).
 */
export function renderJson (value: unknown, indent: number | null): Buffer {
  const text = indent === null ? JSON.stringify(value) : JSON.stringify(value, null, indent)
  return Buffer.from(text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'))
}
