// Writes the page envelope around items that were serialized at load, as DRF's JSONRenderer would:
// compact, non-ASCII as is, U+2028/U+2029 escaped; indented when the client asked for `indent=N`.

import type { PageItems } from '../snapshot/model/snapshot-model.js'

interface PageEnvelope {
  count: number
  next: string | null
  previous: string | null
  /** The items, already in their served form, written straight into the answer. */
  items: PageItems
}

function link (url: string | null): string {
  // Links are percent-encoded ASCII (host checked, query re-encoded): JSON.stringify only adds quotes.
  return url === null ? 'null' : JSON.stringify(url)
}

/** The page up to its items: ASCII, so its length is its byte length. */
function pageHead (page: PageEnvelope): string {
  return `{"count":${page.count},"next":${link(page.next)},"previous":${link(page.previous)},"results":[`
}

const PAGE_TAIL = Buffer.from(']}')

/** The page in one buffer of its own (never a pool's slice: the page cache keeps it), compact or indented. */
export function renderPage (page: PageEnvelope, indent: number | null): Buffer {
  const head = pageHead(page)
  const itemsLength = page.items.byteLength
  const compact = Buffer.allocUnsafeSlow(head.length + itemsLength + PAGE_TAIL.length)
  compact.write(head, 0, 'latin1')
  page.items.copyTo(compact, head.length)
  PAGE_TAIL.copy(compact, head.length + itemsLength)
  return indent === null ? compact : renderJson(JSON.parse(compact.toString('utf8')), indent)
}

/** A compact page as the pieces that make it, in order: nothing copied (the items are views of the model). */
export interface PageParts {
  head: string
  items: Buffer[]
  tail: Buffer
  /** Bytes in all: the Content-Length. */
  byteLength: number
}

/** What `renderPage(page, null)` returns, in parts: the items as views, copied once, by the kernel (ADR 004). */
export function pageParts (page: PageEnvelope): PageParts {
  const head = pageHead(page)
  const items = page.items.views()
  let byteLength = head.length + PAGE_TAIL.length
  for (const view of items) byteLength += view.length
  return { head, items, tail: PAGE_TAIL, byteLength }
}

/**
 * Any JSON body as DRF writes it. Python's `json.dumps(indent=N)` and `JSON.stringify(value, null, N)`
 * lay out the same way (`": "` after keys, `[]` and `{}` for empty containers).
 */
export function renderJson (value: unknown, indent: number | null): Buffer {
  const text = indent === null ? JSON.stringify(value) : JSON.stringify(value, null, indent)
  return Buffer.from(text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'))
}
