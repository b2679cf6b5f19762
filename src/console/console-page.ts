// The operator's console as HTML readable without JavaScript: what is served, how reloads went, what to do about a
// refused file; console-script.ts fills in the preview's cards.
import type { Status } from '../schemas/operations.js'
import type { Versions } from '../schemas/versions.js'
import { html, type Html } from './escape-html.js'
import { megabytes } from '../snapshot/memory-budget.js'

export interface ConsolePageOptions {
  /** Versioned by their content (console-route.ts). */
  assets: { script: string, style: string }
  /** Whether DOCS and METRICS are served, to link them. */
  links: { docs: boolean, metrics: boolean }
  /** From the page's own query: the form submits to /-/ without JavaScript. */
  preview: PreviewQuery
  now: Date
  /** Absent or null: not shown. */
  versions?: Versions | null
  /** Whether the request journal is on (REQUEST_JOURNAL): its section, filled live by console-script.ts. */
  journal?: boolean
}

interface PreviewQuery {
  lang: string | null
  companies: string
  limit: string
  offset: string
}

/** Anything unusable falls back to the defaults. */
export function previewQuery (search: string): PreviewQuery {
  const params = new URLSearchParams(search)
  const number = (name: string, fallback: string): string => {
    const value = params.get(name)?.trim() ?? ''
    return /^[0-9]{1,9}$/.test(value) ? String(Number(value)) : fallback
  }
  return {
    lang: params.get('lang'),
    companies: params.get('companies') ?? '',
    limit: number('limit', '10'),
    offset: number('offset', '0')
  }
}

/** `2026-11-22T20:37:39.019Z` → `2026-11-22 20:37:39 UTC`, in a <time> that keeps the exact instant. */
function time (iso: string): Html {
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC')}</time>`
}

function ago (iso: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000))
  if (seconds < 5) return 'just now'
  if (seconds < 120) return `${seconds} s ago`
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`
  return `${Math.round(seconds / 86_400)} days ago`
}

function when (iso: string, now: Date): Html {
  return html`${time(iso)} <span class="ago">(${ago(iso, now)})</span>`
}

function plural (count: number, one: string): string {
  return `${count} ${one}${count === 1 ? '' : 's'}`
}

function banner (status: Status, now: Date): Html {
  const { snapshot, reloads } = status
  if (snapshot === null) {
    return html`<p class="banner warn" role="status">No snapshot is served yet: the first one is still loading. Every page of the API answers 503 until it is.</p>`
  }
  if (reloads.staleSince !== null) {
    return html`<p class="banner bad" role="alert">The newest ${status.source === null ? 'file' : 'download'} was refused:
      ${plural(reloads.failedInARow, 'failed reload')} in a row, stale since ${when(reloads.staleSince, now)}.
      The service keeps serving the last good snapshot: see <a href="#reloads">Reloads</a>.</p>`
  }
  return html`<p class="banner ok" role="status">Serving the newest ${status.source === null ? 'file' : 'snapshot of the source'}.</p>`
}

function percent (rate: number): string {
  return `${Number((rate * 100).toFixed(2))}%`
}

const FAULT_WORDS: Record<string, string> = {
  reset: 'connections are reset before any answer',
  truncate: 'answers are cut off halfway through the body',
  dribble: 'bodies trickle out in small pieces'
}

/** Said where nobody can miss it: a demo server's answers are not the replica's. */
function troubleNotice (status: Status): Html {
  const { trouble } = status
  if (trouble === null) return html``
  const delay = trouble.delay
  const parts: Html[] = []
  if (delay !== null) {
    parts.push(delay.startsWith('~')
      ? html`every page waits about ${delay.slice(1)} ms (the median of a lognormal spread)`
      : delay.includes('-')
        ? html`every page waits ${delay.replace('-', '–')} ms (uniformly spread)`
        : html`every page waits ${delay} ms`)
  }
  if (trouble.failRate > 0) parts.push(html`${percent(trouble.failRate)} of pages answer ${trouble.failStatus}`)
  if (trouble.fault !== null && trouble.faultRate > 0) {
    parts.push(html`on ${percent(trouble.faultRate)} of pages, ${FAULT_WORDS[trouble.fault] ?? trouble.fault}`)
  }
  if (trouble.chaos) {
    parts.push(
      html`each request may ask for its own delay and status (<code>Prefer: delay=500</code>, <code>Prefer: status=503</code>, <code>?__delay=</code>, <code>?__status=</code>)`
    )
  }
  return html`<p class="banner warn" id="trouble" role="alert"><strong>Simulated trouble is on: this is a demo server.</strong>
    ${parts.map((part, i) => html`${i === 0 ? '' : '; '}${part}`)}. The sequence's seed is <code>${trouble.seed}</code>
    (<code>CHAOS_SEED=${trouble.seed}</code> replays it).</p>`
}

function served (status: Status, now: Date): Html {
  const { snapshot, reloads, source } = status
  const languages = snapshot === null ? [] : Object.entries(snapshot.items)
  return html`<section id="served" aria-labelledby="served-title">
  <h2 id="served-title">What is served</h2>
  ${banner(status, now)}
  <dl class="facts">
    ${source === null
      ? html`<dt>File</dt><dd><code>${status.path}</code></dd>`
      : html`<dt>Source</dt><dd><code>${source.url}</code></dd><dt>Cached copy</dt><dd><code>${status.path}</code></dd>`}
    ${snapshot === null
      ? html``
      : html`<dt>Version</dt><dd><code id="served-version">${snapshot.version}</code></dd>
    <dt><code>generated_at</code></dt><dd id="served-generated-at">${snapshot.generatedAt ?? 'not given in the file'}</dd>
    <dt>Loaded</dt><dd id="served-loaded-at">${when(snapshot.loadedAt, now)}</dd>
    <dt>Last successful reload</dt><dd>${reloads.succeeded > 0 ? when(snapshot.loadedAt, now) : 'none since start-up: the snapshot loaded at start-up is served'}</dd>`}
    <dt>Reloads since start-up</dt><dd>${reloads.succeeded} succeeded, ${reloads.failed} refused</dd>
    ${reloads.changeFiles === undefined || (reloads.changeFiles.applied === 0 && reloads.changeFiles.refused === 0) ? html`` : html`<dt>Change files since start-up</dt><dd id="change-files">${reloads.changeFiles.applied} applied, ${reloads.changeFiles.refused} refused (refused files are listed with their reports below)</dd>`}
    ${reloads.staleSince === null ? html`` : html`<dt>Stale since</dt><dd class="bad-text">${when(reloads.staleSince, now)}</dd>`}
    ${status.memory === null
      ? html``
      : html`<dt>Memory budget</dt><dd id="memory-budget">${megabytes(status.memory.budget)} (${status.memory.budgetSource})${status.servingThreads === null ? '' : ', for the whole process'}${reloads.refusals.too_big === 0 ? '' : `; ${plural(reloads.refusals.too_big, 'file')} refused for memory`}</dd>`}
  </dl>
  ${languages.length === 0
    ? html``
    : html`<table class="items" id="items-per-language">
    <caption>Items per language</caption>
    <thead><tr><th scope="col">Language</th><th scope="col">Items</th><th scope="col">API</th></tr></thead>
    <tbody>${languages.map(([language, count]) => html`
      <tr><th scope="row"><code>${language}</code></th><td class="number">${count.toLocaleString('en-US')}</td><td><a href="/${encodeURIComponent(language)}/api/internal/explore/">/${language}/api/internal/explore/</a></td></tr>`)}
    </tbody>
  </table>`}
  ${appliedChanges(snapshot?.changes ?? [], snapshot?.garbageBytes ?? 0)}
</section>`
}

/** Read-only: the actions need the operator's token, never kept in a browser. */
function keptVersions (versions: Versions | null | undefined, now: Date): Html {
  if (versions === null || versions === undefined) return html``
  const { pin, newest, kept } = versions
  return html`<section id="versions" aria-labelledby="versions-title">
  <h2 id="versions-title">Versions</h2>
  ${pin === null
    ? html`<p id="pin">Not pinned: the newest file or published object is served as it comes.</p>`
    : html`<p class="banner warn" id="pin" role="status">Pinned to <code>${pin.version}</code> since ${when(pin.pinnedAt, now)}${pin.from === null ? '' : html` (it replaced <code>${pin.from}</code>)`}:
      newer files and published objects are not loaded. ${newest === null ? 'Nothing newer has been noticed.' : html`A newer one was noticed ${when(newest.noticedAt, now)} at <code>${newest.source}</code>.`}
      <code>POST /-/unpin</code> (or <kbd>explore-replica unpin</kbd>) follows the source again.</p>`}
  ${kept.length === 0
    ? html`<p>No version is kept yet.</p>`
    : html`<table class="workers" id="kept-versions">
    <caption>Kept versions, newest first: each can be served again at once (<kbd>explore-replica pin VERSION</kbd>, <kbd>explore-replica rollback</kbd>)</caption>
    <thead><tr><th scope="col">Version</th><th scope="col"><code>generated_at</code></th><th scope="col">Items</th><th scope="col">First served</th><th scope="col">From</th></tr></thead>
    <tbody>${kept.map(record => html`
      <tr${record.served ? html` class="served"` : ''}><th scope="row"><code>${record.version}</code>${record.served ? html` <span class="badge">served</span>` : ''}${pin?.version === record.version ? html` <span class="badge">pinned</span>` : ''}</th><td>${record.generatedAt ?? '–'}</td><td>${Object.entries(record.items).map(([language, count]) => `${language} ${count}`).join(', ')}</td><td>${when(record.servedAt, now)}</td><td><code>${record.source}</code></td></tr>`)}
    </tbody>
  </table>`}
</section>`
}

function appliedChanges (
  changes: NonNullable<NonNullable<Status['snapshot']>['changes']>, garbageBytes: number
): Html {
  if (changes.length === 0) return html``
  return html`<table class="items" id="applied-changes">
    <caption>Change files applied, in order (${(garbageBytes / 1024 / 1024).toFixed(1)} MiB of replaced items held until the next full load)</caption>
    <thead><tr><th scope="col">id</th><th scope="col">File</th><th scope="col">Upserts</th><th scope="col">Deletes</th><th scope="col">Of absent items</th></tr></thead>
    <tbody>${changes.map(change => html`
      <tr><th scope="row"><code>${change.id}</code></th><td><code>${change.file}</code></td><td class="number">${change.upserts}</td><td class="number">${change.deletes}</td><td class="number">${change.absentDeletes}</td></tr>`)}
    </tbody>
  </table>`
}

function followedSource (status: Status, now: Date): Html {
  const { source } = status
  if (source === null) return html``
  return html`<section id="source" aria-labelledby="source-title">
  <h2 id="source-title">Published source</h2>
  <dl class="facts">
    <dt>URL</dt><dd><code>${source.url}</code></dd>
    <dt>ETag served</dt><dd><code>${source.etag ?? 'none'}</code></dd>
    <dt>Last checked</dt><dd>${source.lastChecked === null ? 'not yet' : when(source.lastChecked, now)}</dd>
    <dt>Last changed</dt><dd>${source.lastChanged === null ? 'not since start-up' : when(source.lastChanged, now)}</dd>
    <dt>Checks</dt><dd>${source.checks} (${plural(source.errors, 'error')})</dd>
    ${source.lastError === null ? html`` : html`<dt>Last error</dt><dd class="bad-text">${when(source.lastError.at, now)}: ${source.lastError.message}</dd>`}
  </dl>
</section>`
}

function workers (status: Status, now: Date): Html {
  const list = status.servingThreads ?? []
  // One thread has nothing to compare: the facts above are its own.
  if (list.length === 0) return html``
  const version = status.snapshot?.version ?? null
  return html`<section id="workers" aria-labelledby="workers-title">
  <h2 id="workers-title">Serving threads</h2>
  <p>${list.length} threads answer the public port, all from one copy of the snapshot, loaded once.</p>
  <table class="workers">
    <thead><tr><th scope="col">Thread</th><th scope="col">Thread id</th><th scope="col">Version</th><th scope="col">Started</th><th scope="col">Restarts</th></tr></thead>
    <tbody>${list.map(thread => html`
      <tr${thread.version === version ? '' : html` class="differs"`}><th scope="row">${thread.id}</th><td>${thread.threadId}</td><td><code>${thread.version ?? 'not yet'}</code></td><td>${when(thread.since, now)}</td><td>${thread.restarts}</td></tr>`)}
    </tbody>
  </table>
</section>`
}

function nextStep (status: Status, now: Date): Html {
  const { snapshot, reloads, source } = status
  if (reloads.staleSince === null) return html``
  const keeps = snapshot === null
    ? html`No snapshot is served yet.`
    : html`The service keeps serving version <code>${snapshot.version}</code>${snapshot.generatedAt === null ? '' : html` (<code>generated_at</code> ${snapshot.generatedAt})`}, loaded ${when(snapshot.loadedAt, now)}.`
  const fix = reloads.recentFailures[0]?.reason === 'too_big'
    ? html`The newest ${source === null ? 'file' : 'snapshot'} needs more memory than the budget leaves free: give the service more (<code>MEMORY_LIMIT_MB</code>, the container's limit) or make the snapshot smaller.`
    : source === null
      ? html`Fix the file and save it again; check it first with <kbd>npx explore-replica check ${status.path}</kbd>.`
      : html`Fix the snapshot and publish it again at <code>${source.url}</code>; check it first with <kbd>npx explore-replica check FILE</kbd>.`
  return html`<div class="next-step" id="next-step"><h3>What to do</h3><p>${keeps} ${fix} The problems are listed below, newest file first.</p></div>`
}

function refusals (status: Status, now: Date): Html {
  const { reloads } = status
  const list = reloads.recentFailures
  const staleSince = reloads.staleSince === null ? null : Date.parse(reloads.staleSince)
  return html`<section id="reloads" aria-labelledby="reloads-title">
  <h2 id="reloads-title">Reloads</h2>
  ${nextStep(status, now)}
  ${list.length === 0
    ? html`<p id="no-refusals">No file has been refused since the service started.</p>`
    : html`<h3>Refused files <span class="aside">${list.length === 1 ? '(one)' : `(the last ${list.length}, newest first)`}</span></h3>
  <ol class="refusals" id="refusals">${list.map(refusal => {
    // Failures since staleSince are the ones still unfixed; older ones were followed by a good file.
    const current = staleSince !== null && Date.parse(refusal.at) >= staleSince
    return html`
    <li class="refusal ${current ? 'current' : 'fixed'}">
      <p class="refusal-head">${when(refusal.at, now)}: <code>${refusal.file}</code>
        <span class="badge">${current ? 'not fixed yet' : 'fixed since: a later file was served'}</span></p>
      ${refusal.reason === 'too_big'
        ? html`<p>The service refused this file: it does not fit in the memory budget.</p>`
        : html`<p>The service refused this file with ${plural(refusal.problems.length, 'problem')}. Each line says where (the line number, or the JSON path) and which rule is broken:</p>`}
      <ul class="problems">${refusal.problems.map(problem => html`<li><code>${problem}</code></li>`)}</ul>
    </li>`
  })}
  </ol>`}
</section>`
}

function preview (status: Status, query: PreviewQuery): Html {
  const languages = status.snapshot === null ? [] : Object.keys(status.snapshot.items)
  if (languages.length === 0) return html``
  const lang = query.lang !== null && languages.includes(query.lang)
    ? query.lang
    : languages.includes('en') ? 'en' : languages[0] as string
  const companies = query.companies.split(/[\s,]+/).filter(id => id !== '')
  const api = new URLSearchParams([
    ...companies.map((id): [string, string] => ['companies', id]), ['limit', query.limit], ['offset', query.offset]
  ])
  return html`<section id="preview" aria-labelledby="preview-title">
  <h2 id="preview-title">Preview</h2>
  <p>The items as the API serves them: choose a language and one or more companies (ids, separated by commas; none for every item).</p>
  <form id="preview-form" action="/-/" method="get">
    <label>Language
      <select name="lang">${languages.map(code => html`<option value="${code}"${code === lang ? html` selected` : ''}>${code} (${status.snapshot?.items[code] ?? 0} items)</option>`)}</select>
    </label>
    <label>Companies
      <input name="companies" value="${query.companies}" placeholder="e.g. 7, 12" inputmode="numeric" autocomplete="off">
    </label>
    <label>Per page
      <input name="limit" type="number" min="1" value="${query.limit}">
    </label>
    <input type="hidden" name="offset" value="0">
    <button type="submit">Show</button>
  </form>
  <noscript><p class="warn-text">The preview needs JavaScript. The same items straight from the API:
    <a href="/${encodeURIComponent(lang)}/api/internal/explore/?${api.toString()}">/${lang}/api/internal/explore/?${api.toString()}</a></p></noscript>
  <div class="pager">
    <button type="button" id="preview-previous" hidden>← Previous</button>
    <p id="preview-summary" aria-live="polite"></p>
    <button type="button" id="preview-next" hidden>Next →</button>
  </div>
  <ol class="cards" id="preview-cards"></ol>
</section>`
}

/** Filled and kept fresh by the script from /-/requests; without it, a link to the JSON. */
function requests (options: ConsolePageOptions): Html {
  if (options.journal !== true) return html``
  return html`<section id="requests" aria-labelledby="requests-title">
  <h2 id="requests-title">Requests</h2>
  <p>What the API was asked for, newest first, as the request journal keeps it (<a href="/-/requests">/-/requests</a>, <a href="/-/requests.har">as HAR</a>).
    <button type="button" id="requests-clear" hidden>Clear</button></p>
  <p id="requests-summary" aria-live="polite">Read every 2 seconds while this page is shown.</p>
  <table class="workers" id="requests-table">
    <thead><tr><th scope="col">Read</th><th scope="col">Method</th><th scope="col">URL</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">Trouble</th></tr></thead>
    <tbody id="requests-rows"></tbody>
  </table>
</section>`
}

function links (options: ConsolePageOptions): Html {
  return html`<nav aria-label="Operational endpoints"><ul>
    <li><a href="/-/status">Status (JSON)</a></li>
    ${options.links.docs ? html`<li><a href="/-/docs">API docs</a></li>` : ''}
    ${options.links.metrics ? html`<li><a href="/-/metrics">Metrics</a></li>` : ''}
  </ul></nav>`
}

export function renderConsolePage (status: Status, options: ConsolePageOptions): string {
  const { now } = options
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>explore-replica console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${options.assets.style}">
<script type="module" src="${options.assets.script}"></script>
</head>
<body>
<header>
  <h1>explore-replica <span class="aside">${status.version} · operator's console</span></h1>
  ${links(options)}
</header>
<main>
${troubleNotice(status)}
${served(status, now)}
${keptVersions(options.versions, now)}
${followedSource(status, now)}
${workers(status, now)}
${refusals(status, now)}
${preview(status, options.preview)}
${requests(options)}
</main>
<footer><p>Rendered ${time(now.toISOString())}. Reload the page for newer facts.</p></footer>
</body>
</html>
`.markup
}
