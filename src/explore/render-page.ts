// Writes the page envelope around items that were serialized at load, as DRF's JSONRenderer would:
// compact, non-ASCII as is, U+2028/U+2029 escaped; indented when the client asked for `indent=N`.

import type { PageItems } from '../snapshot/snapshot-model.js'
import { allocAnswer } from './page-slab.js'

export interface PageEnvelope {
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

export function renderPage (page: PageEnvelope, indent: number | null): Buffer {
  const head = `{"count":${page.count},"next":${link(page.next)},"previous":${link(page.previous)},"results":[`
  // One allocation for the whole answer; the head is ASCII, so its length is its byte length.
  const itemsLength = page.items.byteLength
  const compact = allocAnswer(head.length + itemsLength + 2)
  compact.write(head, 0, 'latin1')
  page.items.copyTo(compact, head.length)
  compact[head.length + itemsLength] = 0x5d // ]
  compact[head.length + itemsLength + 1] = 0x7d // }
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
