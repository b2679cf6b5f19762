// The console's HTML for the states a single test app does not reach: a followed SNAPSHOT_URL, a
// serving threads, the first load still running.
import t from 'tap'
import { Script } from 'node:vm'
import { renderConsolePage, type ConsolePageOptions } from '../../src/console/console-page.js'
import { CONSOLE_SCRIPT } from '../../src/console/console-script.js'
import { CONSOLE_STYLE } from '../../src/console/console-style.js'
import type { Status } from '../../src/schemas/operations.js'

const NOW = new Date('2026-11-22T12:00:00Z')
const OPTIONS: ConsolePageOptions = {
  assets: { script: '/-/console.js?v=1', style: '/-/console.css?v=1' },
  links: { docs: true, metrics: true },
  preview: { lang: null, companies: '', limit: '10', offset: '0' },
  now: NOW
}

function status (overrides: Partial<Status> = {}): Status {
  return {
    version: '1.2.3',
    node: 'v20.19.4',
    path: '/var/cache/explore/snapshot-abc.jsonl',
    snapshot: { version: 'v-served', generatedAt: '2026-11-20T09:30:00Z', loadedAt: '2026-11-22T11:00:00.000Z', items: { en: 3, fr: 1 } },
    reloads: { succeeded: 2, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null, refusals: { invalid: 0, too_big: 0 }, recentFailures: [] },
    memory: null,
    source: null,
    servingThreads: null,
    trouble: null,
    pin: null,
    newest: null,
    ...overrides
  }
}

t.test('a followed source: its URL, its checks, and advice to publish again', async t => {
  const at = '2026-11-22T11:58:00.000Z'
  const body = renderConsolePage(status({
    source: { url: 'https://snapshots.example.com/explore.jsonl', etag: '"abc"', lastModified: null, lastChecked: at, lastChanged: null, lastError: { at, message: 'the object is not a valid snapshot <b>' }, checks: 7, errors: 1 },
    reloads: { succeeded: 2, failed: 1, failedInARow: 1, lastFailure: { at, problems: ['x.jsonl:3: pk: 1 repeats line 2'] }, staleSince: at, refusals: { invalid: 1, too_big: 0 }, recentFailures: [{ at, file: '/tmp/download-1.jsonl', reason: 'invalid', problems: ['x.jsonl:3: pk: 1 repeats line 2'] }] }
  }), OPTIONS)
  t.match(body, '<dt>Source</dt><dd><code>https://snapshots.example.com/explore.jsonl</code></dd><dt>Cached copy</dt>')
  t.match(body, '<section id="source"')
  t.match(body, '<dt>Checks</dt><dd>7 (1 error)</dd>')
  t.match(body, '<h1>explore-replica <span class="aside">1.2.3 · operator\'s console</span></h1>', 'the version in the header')
  t.match(body, 'the object is not a valid snapshot &lt;b&gt;')
  t.match(body, 'The newest download was refused')
  t.match(body, 'Fix the snapshot and publish it again at <code>https://snapshots.example.com/explore.jsonl</code>')
  t.match(body, '<span class="ago">(2 min ago)</span>')
})

t.test('a file refused for memory: the budget, the numbers, and advice about memory rather than the file', async t => {
  const at = '2026-11-22T11:58:00.000Z'
  const problem = 'needs ~1,480 MB at its peak; 610 MB of the 1,200 MB budget are free'
  const body = renderConsolePage(status({
    reloads: { succeeded: 2, failed: 1, failedInARow: 1, lastFailure: { at, problems: [problem] }, staleSince: at, refusals: { invalid: 0, too_big: 1 }, recentFailures: [{ at, file: '/srv/big.jsonl', reason: 'too_big', problems: [problem] }] },
    memory: { budget: 1200 * 1024 * 1024, budgetSource: 'cgroup v2', lastTooBig: { at, file: '/srv/big.jsonl', neededBytes: 1480 * 1024 * 1024, freeBytes: 610 * 1024 * 1024, budgetBytes: 1200 * 1024 * 1024 } }
  }), OPTIONS)
  t.match(body, '<dt>Memory budget</dt><dd id="memory-budget">1,200 MB (cgroup v2); 1 file refused for memory</dd>')
  t.match(body, 'it does not fit in the memory budget')
  t.match(body, `<code>${problem}</code>`)
  t.match(body, 'needs more memory than the budget leaves free: give the service more (<code>MEMORY_LIMIT_MB</code>')
  t.notMatch(body, 'Fix the file and save it again', 'nothing in the file to fix')
})

t.test('serving threads: a table of them, one that does not serve this version yet marked', async t => {
  const thread = (id: number, version: string | null) => ({ id, threadId: 10 + id, version, since: '2026-11-22T11:00:00.000Z', restarts: id === 2 ? 1 : 0, lettingGo: [] })
  const body = renderConsolePage(status({ servingThreads: [thread(0, 'v-served'), thread(1, 'v-served'), thread(2, null)] }), OPTIONS)
  t.match(body, '3 threads answer the public port, all from one copy of the snapshot')
  t.match(body, '<tr><th scope="row">0</th>', 'thread 0 serves this version')
  t.match(body, '<tr class="differs"><th scope="row">2</th>', 'thread 2 not yet')
  t.match(body, '<td><code>not yet</code></td>')
  const single = renderConsolePage(status({ servingThreads: null }), OPTIONS)
  t.notMatch(single, '<section id="workers"', 'one thread has nothing to compare')
})

t.test('while the first snapshot loads: said so, and no preview', async t => {
  const body = renderConsolePage(status({ snapshot: null, reloads: { succeeded: 0, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null, refusals: { invalid: 0, too_big: 0 }, recentFailures: [] } }), OPTIONS)
  t.match(body, 'No snapshot is served yet: the first one is still loading.')
  t.notMatch(body, 'id="preview"')
})

t.test('the browser script parses, and writes data only as text', async t => {
  t.doesNotThrow(() => new Script(CONSOLE_SCRIPT, { filename: 'console.js' }), 'valid JavaScript')
  t.notMatch(CONSOLE_SCRIPT, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/)
  t.notMatch(CONSOLE_STYLE, /url\(|@import/, 'the stylesheet loads nothing else')
})
