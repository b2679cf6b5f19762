// `explore-replica versions|rollback|pin VERSION|unpin`: the operator's actions against a replica's OPS_PORT.
// The token comes from OPS_TOKEN, never a flag: a flag shows in `ps` and in shell history.
import { parseArgs } from 'node:util'
import { UsageError } from '../errors.js'
import type { Versions } from '../schemas/versions.js'
import { describeFetchError } from '../sources/http-source.js'
import { shownSource, shownUrl } from '../secret-url.js'

export const VERSIONS_USAGE = `Usage: explore-replica versions --ops-url URL        the served version, the kept ones, the pin
       explore-replica rollback --ops-url URL        serve the kept version before the served one, and pin it
       explore-replica pin VERSION --ops-url URL     serve a kept version and pin it
       explore-replica unpin --ops-url URL           follow the source again (its newest is loaded at once)

  --ops-url URL   the replica's operator listener, e.g. http://127.0.0.1:9100 (its OPS_PORT); or OPS_URL
  --json          print the replica's answer (GET /-/versions's body) as it is

The actions send Authorization: Bearer $OPS_TOKEN: set OPS_TOKEN to the replica's own.
Exit codes: 0 done; 1 refused by the replica (an unknown version, nothing older to roll back to, a load that
failed); 2 bad usage; 3 not allowed (no or wrong token, or actions off on the replica); 4 the replica cannot be
reached (connection refused, no answer, not an operator's listener).
`

const EXIT = { done: 0, refused: 1, notAllowed: 3, unreachable: 4 } as const

type Action = 'versions' | 'rollback' | 'pin' | 'unpin'

export async function versionsCommand (action: Action, argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'ops-url': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false }
    },
    allowPositionals: true
  })
  if (values.help) {
    process.stdout.write(VERSIONS_USAGE)
    return EXIT.done
  }
  const base = values['ops-url'] ?? process.env.OPS_URL
  if (base === undefined || base.trim() === '') {
    throw new UsageError(
      '--ops-url URL is needed: the replica\'s operator listener (OPS_PORT), e.g. http://127.0.0.1:9100'
    )
  }
  let url: URL
  try {
    url = new URL(action === 'versions' ? '/-/versions' : `/-/${action}`, base)
  } catch {
    throw new UsageError(`--ops-url ${JSON.stringify(shownUrl(base))} is not a URL`)
  }
  if (action === 'pin' && positionals.length !== 1) {
    throw new UsageError('pin needs one VERSION (explore-replica versions lists the kept ones)')
  }
  if (action !== 'pin' && positionals.length > 0) {
    throw new UsageError(`${action} takes no argument, got ${JSON.stringify(positionals[0])}`)
  }

  const token = process.env.OPS_TOKEN?.trim() ?? ''
  const headers: Record<string, string> = { accept: 'application/json' }
  if (action !== 'versions' && token !== '') headers.authorization = `Bearer ${token}`
  if (action === 'pin') headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(url, {
      method: action === 'versions' ? 'GET' : 'POST',
      headers,
      ...(action === 'pin' ? { body: JSON.stringify({ version: positionals[0] }) } : {}),
      // A pin waits for the version's load: as long as a large snapshot takes.
      signal: AbortSignal.timeout(15 * 60 * 1000)
    })
  } catch (error) {
    const cause = describeFetchError(error)
    process.stderr.write(
      `explore-replica ${action}: cannot reach the replica at ${url.origin} (${cause === 'ECONNREFUSED' ? 'connection refused' : cause}): is it running, and is --ops-url its OPS_PORT?\n`
    )
    return EXIT.unreachable
  }
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = null
  }
  const detail = (body as { detail?: unknown } | null)?.detail
  const said = typeof detail === 'string' ? detail : `${response.status} ${response.statusText}`
  if (response.status === 401) {
    process.stderr.write(
      `explore-replica ${action}: not allowed (401: ${said}) ${token === '' ? 'OPS_TOKEN is not set in this shell: set it to the replica\'s token.' : 'OPS_TOKEN is not the replica\'s token.'}\n`
    )
    return EXIT.notAllowed
  }
  if (response.status === 403) {
    process.stderr.write(
      `explore-replica ${action}: not allowed (403: ${said}) The replica was started without OPS_TOKEN: its actions are off.\n`
    )
    return EXIT.notAllowed
  }
  if (response.status === 404 && said === 'Not found.') {
    process.stderr.write(
      `explore-replica ${action}: ${url.origin} has no ${url.pathname} (404): --ops-url must be the replica's operator listener (OPS_PORT), which has the actions.\n`
    )
    return EXIT.unreachable
  }
  if (response.status !== 200 || body === null) {
    process.stderr.write(`explore-replica ${action}: refused (${response.status}): ${said}\n`)
    return EXIT.refused
  }
  process.stdout.write(values.json ? `${text}\n` : describe(body as Versions))
  return EXIT.done
}

function describe ({ served, pin, newest, kept }: Versions): string {
  const lines = [
    `served: ${served === null ? 'nothing yet' : `${served.version}${served.generatedAt === null ? '' : ` (generated_at ${served.generatedAt})`}`}`,
    `pinned: ${pin === null ? 'no (following the source)' : `${pin.version} since ${pin.pinnedAt}${pin.from === null ? '' : `, replacing ${pin.from}`}`}`
  ]
  if (newest !== null) lines.push(`newer, held back: noticed ${newest.noticedAt} at ${shownSource(newest.source)}`)
  lines.push('kept versions, newest first:')
  for (const record of kept) {
    const items = Object.entries(record.items).map(([language, count]) => `${language} ${count}`).join(', ')
    lines.push(
      `  ${record.served ? '*' : ' '} ${record.version}  ${record.generatedAt ?? '-'}  ${items}  first served ${record.servedAt}`
    )
  }
  return `${lines.join('\n')}\n`
}
