// The console's Versions section: the kept versions and the pin, read-only (the actions need the token,
// which a browser never holds).
import t from 'tap'
import { renderConsolePage } from '../../src/console/console-page.js'
import { buildTestApp } from '../helpers.js'

t.test('the console lists the kept versions and says what is pinned and what is held back', async t => {
  const body = renderConsolePage({
    version: '1.2.3',
    node: 'v20.19.4',
    path: '/srv/snapshot.json',
    snapshot: { version: 'v-old', generatedAt: null, loadedAt: '2026-11-24T10:00:00.000Z', items: { en: 3 } },
    reloads: { succeeded: 1, failed: 0, failedInARow: 0, lastFailure: null, staleSince: null, refusals: { invalid: 0, too_big: 0 }, recentFailures: [] },
    memory: null,
    source: null,
    servingThreads: null,
    trouble: null,
    pin: { version: 'v-old', pinnedAt: '2026-11-24T10:00:00.000Z', from: 'v-new' },
    newest: { noticedAt: '2026-11-24T10:30:00.000Z', source: '/srv/snapshot.json', etag: null }
  }, {
    assets: { script: '/-/console.js', style: '/-/console.css' },
    links: { docs: false, metrics: false },
    preview: { lang: null, companies: '', limit: '10', offset: '0' },
    now: new Date('2026-11-24T11:00:00Z'),
    versions: {
      served: { version: 'v-old', generatedAt: null, items: { en: 3 } },
      pin: { version: 'v-old', pinnedAt: '2026-11-24T10:00:00.000Z', from: 'v-new' },
      newest: { noticedAt: '2026-11-24T10:30:00.000Z', source: '/srv/snapshot.json', etag: null },
      kept: [
        { version: 'v-new', generatedAt: '2026-11-24T09:00:00Z', items: { en: 4, fr: 1 }, servedAt: '2026-11-24T09:01:00.000Z', source: '/srv/snapshot.json', chain: { snapshot: 'snapshot.json', changes: [] }, served: false },
        { version: 'v-old', generatedAt: null, items: { en: 3 }, servedAt: '2026-11-24T08:00:00.000Z', source: '/srv/snapshot.json', chain: { snapshot: 'snapshot.json', changes: [] }, served: true }
      ]
    }
  })
  t.match(body, '<section id="versions"')
  t.match(body, /Pinned to <code>v-old<\/code> since <time[^>]*>2026-11-24 10:00:00 UTC<\/time> <span class="ago">\(60 min ago\)<\/span> \(it replaced <code>v-new<\/code>\)/)
  t.match(body, /A newer one was noticed <time[^>]*>2026-11-24 10:30:00 UTC<\/time> <span class="ago">\(30 min ago\)<\/span> at <code>\/srv\/snapshot\.json<\/code>/)
  t.match(body, /<tr class="served"><th scope="row"><code>v-old<\/code> <span class="badge">served<\/span> <span class="badge">pinned<\/span><\/th>/)
  t.match(body, '<td>en 4, fr 1</td>')
  t.notMatch(body, /<form[^>]*method="post"/i, 'no action from the browser')
})

t.test('GET /-/ shows the replica\'s own kept versions, not pinned', async t => {
  const app = await buildTestApp(t)
  await app.snapshotVersions!.kept.idle()
  const page = (await app.inject('/-/')).body
  t.match(page, '<p id="pin">Not pinned: the newest file or published object is served as it comes.</p>')
  t.match(page, `<code>${app.snapshots.current()!.info.version}</code> <span class="badge">served</span>`)
})
