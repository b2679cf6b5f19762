// The lines printed once a capture is written: what it holds, what it cost, what moved under it.
import { formatBytes } from '../snapshot/write-snapshot-file.js'
import { formatIdRanges } from './id-ranges.js'
import { RETRY_AFTER_CAP_MS } from './retry-policy.js'
import type { CaptureReport } from './run-capture.js'

// A summary is read by a person: past this many pks a list says how many more there are.
const MAX_LISTED = 20

export function formatSummary (report: CaptureReport): string {
  const { walk, stats, options } = report
  const total = walk.languages.reduce((n, language) => n + language.items.length, 0)
  const format = report.format === 'jsonl' ? 'JSON Lines' : `format v1, ${report.format}`
  const lines = [
    `Captured ${options.from} into ${report.path} (${format}, ${formatBytes(report.bytes)}) in ${(report.elapsedMs / 1000).toFixed(1)} s`
  ]

  const counts = walk.languages.map(language => `${language.code} ${language.items.length}`).join(', ')
  const hidden = walk.languages.filter(language => language.onlyThroughCompanies.length > 0)
  const hiddenCount = hidden.reduce((n, language) => n + language.onlyThroughCompanies.length, 0)
  lines.push(`  items: ${counts} (${total} in all${hiddenCount === 0
    ? ''
    : `; ${hiddenCount} only on company pages, not in the unfiltered listing: ${hidden.map(language => `${language.code} ${list(language.onlyThroughCompanies)}`).join('; ')}`})`)
  lines.push(
    `  page size: ${walk.languages.map(language => `${language.code} ${language.pageSize ?? '(one page held all)'}`).join(', ')}`
  )

  const empty = walk.emptyCompanies.length === 0
    ? 'every one has items'
    : `${walk.emptyCompanies.length} with no item in any language (ids the source does not know?): ${formatIdRanges(walk.emptyCompanies)}`
  lines.push(`  companies: ${options.companies.length} listed, ${empty}`)

  const reasons = [...stats.retryReasons].map(([reason, n]) => `${reason} ×${n}`).join(', ')
  const capped = stats.cappedRetryAfters === 0
    ? ''
    : `; ${stats.cappedRetryAfters} Retry-After above ${RETRY_AFTER_CAP_MS / 1000} s cut to it`
  lines.push(
    `  requests: ${stats.requests}, retries: ${stats.retries}${reasons === '' ? '' : ` (${reasons})`}${capped}`
  )

  const changes: string[] = []
  for (const language of walk.languages) {
    if (language.changed.length > 0) {
      changes.push(
        `${language.code}: pk ${list(language.changed)} served with other content on another page (the content seen last is kept)`
      )
    }
  }
  for (const change of walk.countChanges) {
    changes.push(change.company === null
      ? `${change.language}: ${change.from} items at the start, ${change.to} at the end`
      : `${change.language}, company ${change.company}: ${change.from} items on its first page, ${change.to} on a later one`)
  }
  if (changes.length === 0) {
    lines.push('  changed during the walk: nothing')
  } else {
    lines.push(
      '  changed during the walk (walk again for a consistent snapshot):', ...changes.map(change => `    ${change}`)
    )
  }
  return `${lines.join('\n')}\n`
}

function list (pks: readonly number[]): string {
  const shown = pks.slice(0, MAX_LISTED).join(', ')
  return pks.length > MAX_LISTED ? `${shown} and ${pks.length - MAX_LISTED} more` : shown
}
